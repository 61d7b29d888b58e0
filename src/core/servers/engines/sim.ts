import { join } from 'node:path';
import { describeEngine } from '../../../shared/engines.js';
import { push } from './common.js';
import type { EngineModule } from './types.js';
import { VLLM_METRICS, VLLM_PROGRESS } from './vllm.js';

/** The built-in simulator as a child process: `node <servebench cli> sim --mimic vllm ...` (it speaks vLLM's log and metrics). */
export const simEngine: EngineModule = {
  kind: 'sim',
  description: describeEngine('sim'),
  noProbeNote: 'the built-in simulator: nothing to install, no GPU needed',
  healthPath: '/health',
  progress: VLLM_PROGRESS,
  metricsPath: '/metrics',
  metricNames: VLLM_METRICS,
  failures: [],
  spawnFix: 'check the Node installation',
  contextFix: 'serve the model with a longer context (--max-model-len)',
  plan(config, ctx) {
    if (!ctx.cliScript) throw new Error('the simulator needs the servebench CLI script');
    const gpuStateFile = join(ctx.runDir, 'gpu-state.json');
    const args = [ctx.cliScript, 'sim', '--mimic', 'vllm', '--port', String(ctx.port), '--host', ctx.host];
    push(args, '--model', config.servedModelName ?? config.model);
    push(args, '--profile', config.simProfile);
    args.push('--gpu-state', gpuStateFile);
    push(args, '--max-model-len', config.maxModelLen);
    push(args, '--max-num-seqs', config.maxSeqs);
    if (config.prefixCaching !== undefined) args.push('--prefix-caching', String(config.prefixCaching));
    push(args, '--seed', config.seed);
    if (config.diffusion)
      args.push('--block-size', String(config.diffusion.blockSize), '--threshold', String(config.diffusion.threshold));
    args.push(...config.simArgs);
    return {
      command: ctx.nodePath ?? process.execPath,
      args,
      files: [],
      messages: [],
      model: config.servedModelName ?? config.model,
      gpuStateFile,
    };
  },
};
