import { readFile } from 'node:fs/promises';
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
const config = standIn('trtllm', 'trtllm-serve.mjs', 'meta-llama/Llama-3.1-8B-Instruct');

describe('TensorRT-LLM argv (trtllm-serve)', () => {
  it('passes the model and its underscore flags, and the KV cache and metrics settings in its options file', () => {
    const plan = engineFor('trtllm').plan(
      ServerConfigSchema.parse({
        engine: 'trtllm',
        model: 'org/m',
        tensorParallel: 2,
        maxSeqs: 64,
        maxModelLen: 8192,
        maxNumTokens: 4096,
        gpuMemoryFraction: 0.8,
        prefixCaching: false,
        kvCacheDtype: 'fp8',
        extraArgs: ['--trust_remote_code'],
      }),
      ctx,
    );
    expect(plan.command).toBe('python3');
    // prettier-ignore
    expect(plan.args).toEqual([
      '-m', 'tensorrt_llm.commands.serve', 'serve', 'org/m', '--host', '127.0.0.1', '--port', '8123',
      '--tp_size', '2', '--max_batch_size', '64', '--max_seq_len', '8192', '--max_num_tokens', '4096',
      '--extra_llm_api_options', '/runs/r1/trtllm-llm-api-options.yaml', '--trust_remote_code',
    ]);
    expect(plan.files).toEqual([
      {
        path: '/runs/r1/trtllm-llm-api-options.yaml',
        content: expect.stringContaining(
          'return_perf_metrics: true\nenable_iter_perf_stats: true\nkv_cache_config:\n  free_gpu_memory_fraction: 0.8\n  enable_block_reuse: false\n  dtype: "fp8"\n',
        ),
      },
    ]);
    expect(plan.model).toBeUndefined(); // it names the model itself: asked from /v1/models
  });

  it('names what it has no setting for', () => {
    const plan = engineFor('trtllm').plan(
      ServerConfigSchema.parse({ engine: 'trtllm', model: 'm', quantization: 'awq', seed: 3 }),
      ctx,
    );
    expect(plan.messages.sort()).toEqual([
      'TensorRT-LLM ignores --quantization (TensorRT-LLM reads the quantization from the checkpoint: serve a quantized checkpoint)',
      'TensorRT-LLM ignores --seed',
    ]);
  });

  it('reads its failure lines', () => {
    expect(classifyLog(['ValueError: No GPU devices found on the node'], 'trtllm')?.kind).toBe('cuda-mismatch');
    expect(
      classifyLog(
        ['RuntimeError: Failed to bind socket to 127.0.0.1:8000: [Errno 98] Address already in use'],
        'trtllm',
      ),
    ).toMatchObject({ kind: 'port-in-use', message: 'port 8000 on 127.0.0.1 is already in use' });
    expect(classifyLog(["ModuleNotFoundError: No module named 'tensorrt_llm'"], 'trtllm')?.fix).toMatch(
      /pip install tensorrt_llm/,
    );
  });
});

describe('launching TensorRT-LLM (fake trtllm-serve)', () => {
  it('probes the version, reads the KV cache and batch size from its log, scrapes its Prometheus names', async () => {
    const { runDir, recordFile } = await makeRun();
    const log = eventLog();
    const server = await manager().start(config(recordFile, { maxSeqs: 32, gpuMemoryFraction: 0.5 }), {
      runDir,
      onEvent: log.onEvent,
    });
    expect(server.info).toMatchObject({
      engine: 'trtllm',
      engineVersion: '1.1.0',
      model: 'meta-llama/Llama-3.1-8B-Instruct',
      simulated: false,
      kvCacheTokens: 110240,
      maxRunningRequests: 32,
      metricsUrl: `${server.info.baseUrl}/prometheus/metrics`,
    });
    const engine = readRecord(recordFile).find((e) => e.kind === 'engine') as { options?: unknown } | undefined;
    expect(engine?.options).toMatchObject({
      return_perf_metrics: true,
      enable_iter_perf_stats: true,
      kv_cache_config: { free_gpu_memory_fraction: 0.5 },
    });
    const sample = engineSampleFromMetrics(
      parsePrometheusText(await (await fetch(server.info.metricsUrl as string)).text()),
      0,
    );
    expect(sample).toMatchObject({ running: 0, waiting: 0, kvUsage: 0, generationTokensTotal: 0 });
    const pids = launchedPids(recordFile);
    expect(alivePids(pids)).toHaveLength(1);
    await server.stop();
    expect(alivePids(pids)).toEqual([]);
  });

  it('fails the start on out of GPU memory with the fix, leaving nothing', async () => {
    const { runDir, recordFile } = await makeRun();
    const error = await startError(manager().start(config(recordFile, {}, 'oom'), { runDir }));
    expect(error.failure.kind).toBe('oom');
    expect(error.failure.fix).toMatch(/free_gpu_memory_fraction/);
    expect(alivePids(launchedPids(recordFile))).toEqual([]);
    expect(await readFile(`${runDir}/trtllm-llm-api-options.yaml`, 'utf8')).toMatch(/^# written by servebench/);
  });
});
