import { afterEach, describe, expect, it } from 'vitest';
import { ServerConfigSchema } from '../../../src/shared/config.js';
import { engineFor } from '../../../src/core/servers/engines/index.js';
import { classifyLog } from '../../../src/core/servers/failures.js';
import { engineSampleFromMetrics } from '../../../src/core/telemetry/engine-metrics.js';
import { parsePrometheusText } from '../../../src/core/telemetry/prometheus-parser.js';
import { alivePids, eventLog, launchedPids, makeRun, managerPool, readRecord, standIn, startError } from './helpers.js';

const ctx = { host: '127.0.0.1', port: 8123, runDir: '/runs/r1' };
const { manager, stopAll } = managerPool();
afterEach(stopAll);
const config = standIn('lmdeploy', 'lmdeploy-serve.mjs', 'internlm/internlm2_5-7b-chat');

describe('LMDeploy argv (lmdeploy serve api_server)', () => {
  it('maps every setting to its api_server argument, extra args last', () => {
    const plan = engineFor('lmdeploy').plan(
      ServerConfigSchema.parse({
        engine: 'lmdeploy',
        model: 'org/m-awq',
        lmdeployBackend: 'turbomind',
        servedModelName: 'm',
        tensorParallel: 2,
        dtype: 'bfloat16',
        quantization: 'awq',
        kvCacheDtype: 'int8',
        maxModelLen: 8192,
        maxSeqs: 64,
        gpuMemoryFraction: 0.7,
        prefixCaching: true,
        extraArgs: ['--log-level', 'INFO'],
      }),
      ctx,
    );
    expect(plan.command).toBe('python3');
    // prettier-ignore
    expect(plan.args).toEqual([
      '-m', 'lmdeploy', 'serve', 'api_server', 'org/m-awq', '--server-name', '127.0.0.1', '--server-port', '8123',
      '--model-name', 'm', '--backend', 'turbomind', '--tp', '2', '--dtype', 'bfloat16', '--model-format', 'awq',
      '--quant-policy', 'int8', '--session-len', '8192', '--max-batch-size', '64', '--cache-max-entry-count', '0.7',
      '--enable-prefix-caching', '--log-level', 'INFO',
    ]);
    expect(plan.model).toBe('m');
  });

  it('serves a diffusion model on its PyTorch engine with the dLLM block and threshold, and says so', () => {
    const plan = engineFor('lmdeploy').plan(
      ServerConfigSchema.parse({ engine: 'lmdeploy', model: 'm', diffusion: { blockSize: 16, threshold: 0.9 } }),
      ctx,
    );
    expect(plan.args).toEqual(
      expect.arrayContaining([
        '--backend',
        'pytorch',
        '--dllm-block-length',
        '16',
        '--dllm-confidence-threshold',
        '0.9',
      ]),
    );
    expect(plan.messages).toEqual([expect.stringMatching(/PyTorch engine: servebench passes --backend pytorch/)]);
  });

  it('reads its out-of-memory lines', () => {
    expect(classifyLog(['RuntimeError: No enough gpu memory for kv cache.'], 'lmdeploy')).toMatchObject({
      kind: 'oom',
      fix: expect.stringMatching(/--cache-max-entry-count/),
    });
  });
});

describe('launching LMDeploy (fake api_server)', () => {
  it('probes the version, waits out /health 503, names the model, scrapes its Prometheus names', async () => {
    const { runDir, recordFile } = await makeRun();
    const log = eventLog();
    const server = await manager().start(config(recordFile, { maxSeqs: 16, servedModelName: 'chat' }), {
      runDir,
      onEvent: log.onEvent,
    });
    expect(server.info).toMatchObject({
      engine: 'lmdeploy',
      engineVersion: '0.16.0',
      model: 'chat',
      simulated: false,
      metricsUrl: `${server.info.baseUrl}/metrics`,
    });
    const progress = log.events.flatMap((e) => (e.type === 'server-progress' ? [e.key] : []));
    expect(progress).toContain('http');
    const engine = readRecord(recordFile).find((e) => e.kind === 'engine');
    expect(engine?.argv).toEqual(expect.arrayContaining(['--max-batch-size', '16', '--model-name', 'chat']));
    const sample = engineSampleFromMetrics(
      parsePrometheusText(await (await fetch(server.info.metricsUrl as string)).text()),
      0,
    );
    expect(sample).toMatchObject({ running: 0, waiting: 0, kvUsage: 0, prefixCacheHitsTotal: 0 });
    const pids = launchedPids(recordFile);
    expect(alivePids(pids)).toHaveLength(1);
    await server.stop();
    expect(alivePids(pids)).toEqual([]);
  });

  it('fails the start on out of GPU memory with its fix, leaving nothing', async () => {
    const { runDir, recordFile } = await makeRun();
    const error = await startError(manager().start(config(recordFile, {}, 'oom'), { runDir }));
    expect(error.failure).toMatchObject({ kind: 'oom' });
    expect(alivePids(launchedPids(recordFile))).toEqual([]);
  });

  it('refuses a setting value its argparse has no choice for, in its own words', async () => {
    const { runDir, recordFile } = await makeRun();
    const error = await startError(manager().start(config(recordFile, { quantization: 'bitsandbytes' }), { runDir }));
    expect(error.failure.message).toMatch(/argument --model-format: invalid choice: 'bitsandbytes'/);
  });
});
