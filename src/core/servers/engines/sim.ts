import { z } from 'zod';
import { loraAdapters } from '../../../shared/lora.js';
import {
  DIFFUSION_SETTINGS,
  ENGINE_SETTINGS as E,
  LAUNCH_SETTINGS,
  LORA_SETTING,
} from '../../../shared/server-settings.js';
import { setting } from '../../../shared/setting.js';
import { BUNDLED_SIM_PROFILES } from '../../../shared/sim-profiles.js';
import { defineEngine, flag, mapped, used, usedAll } from './define.js';
import { VLLM_METRICS, VLLM_PROGRESS } from './vllm.js';

/** The simulator's own setting: the profile of the engine and GPU it simulates. */
const SIM_PROFILE = setting(z.string().optional(), {
  label: 'Simulator profile',
  metavar: 'NAME',
  help: `simulator profile (resources/sim-profiles: ${BUNDLED_SIM_PROFILES.join(', ')})`,
  group: 'server',
  placeholder: 'h200-llama8b-bf16',
  engineBound: true,
});

/** The simulator takes block size and threshold; its block decoding has no algorithm to choose. */
const SIM_DIFFUSION = z
  .object({ blockSize: DIFFUSION_SETTINGS.blockSize, threshold: DIFFUSION_SETTINGS.threshold })
  .optional();

/** The built-in simulator as a child process: `node <servebench cli> sim --mimic vllm ...` (it speaks vLLM's log and metrics). */
export const simEngine = defineEngine({
  kind: 'sim',
  description: {
    name: 'Simulator',
    hint: 'its numbers come from a simulated engine and GPU, and are marked SIMULATED wherever they appear',
    requiresModel: false,
    modelHint: 'a name for the simulated model',
    install: 'built in',
  },
  settings: {
    ...usedAll(LAUNCH_SETTINGS, 'the launch itself'),
    model: used(LAUNCH_SETTINGS.model, '--model (the served model name wins)'),
    servedModelName: used(LAUNCH_SETTINGS.servedModelName, '--model'),
    simProfile: used(SIM_PROFILE, '--profile', { suggest: BUNDLED_SIM_PROFILES }),
    maxModelLen: flag(E.maxModelLen, '--max-model-len'),
    maxSeqs: flag(E.maxSeqs, '--max-num-seqs'),
    prefixCaching: mapped(E.prefixCaching, '--prefix-caching true|false', (v) => ['--prefix-caching', String(v)]),
    seed: flag(E.seed, '--seed'),
    // The simulator needs no adapter weights: it serves each name, at a small cost per adapter in a batch.
    lora: mapped(LORA_SETTING, '--lora-modules NAME ...', (text) =>
      loraAdapters(text).flatMap((a) => ['--lora-modules', a.name]),
    ),
    diffusion: mapped(SIM_DIFFUSION, '--block-size B --threshold T', (d) => [
      '--block-size',
      String(d.blockSize),
      '--threshold',
      String(d.threshold),
    ]),
  },
  simulated: true,
  versionFromServer: true,
  noProbeNote: 'the built-in simulator: nothing to install, no GPU needed',
  healthPath: '/health',
  progress: VLLM_PROGRESS,
  metricsPath: '/metrics',
  metricNames: VLLM_METRICS,
  failures: [],
  spawnFix: 'check the Node installation',
  cacheReset: { path: '/reset_prefix_cache', notServed: 'this simulator serves no cache reset: update servebench' },
  contextFix: 'serve the model with a longer context (--max-model-len)',
  command(config, ctx) {
    if (!ctx.cliScript || !ctx.nodePath) throw new Error('the simulator needs the servebench CLI script and Node');
    const gpuStateFile = `${ctx.runDir.replace(/\/+$/, '')}/gpu-state.json`;
    const model = config.servedModelName ?? config.model;
    const head = [ctx.cliScript(), 'sim', '--mimic', 'vllm', '--port', String(ctx.port), '--host', ctx.host];
    if (model) head.push('--model', model);
    if (config.simProfile) head.push('--profile', config.simProfile);
    head.push('--gpu-state', gpuStateFile);
    return { command: ctx.nodePath, head, ...(model !== undefined ? { model } : {}), gpuStateFile };
  },
});
