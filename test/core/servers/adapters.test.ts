import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ServerConfigSchema, type ServerConfig } from '../../../src/shared/config.js';
import { engineFor, SGLANG_PROGRESS, VLLM_PROGRESS } from '../../../src/core/servers/engines/index.js';

const vllmAdapter = engineFor('vllm');
const sglangAdapter = engineFor('sglang');
const simAdapter = engineFor('sim');
const adapterFor = engineFor;
import { parseQuantizationChoices } from '../../../src/core/servers/engine-probe.js';
import { progress } from './helpers.js';
import { classifyLog, failureFromExit } from '../../../src/core/servers/failures.js';
import { findCliScript, findPackageRoot } from '../../../src/core/package-root.js';
import { listPresets, loadPreset } from '../../../src/core/servers/presets.js';
import { createRedactor, isSecretName, redact, redactArgv, redactLine } from '../../../src/core/servers/redact.js';
import { ServerConfigError } from '../../../src/core/servers/server-errors.js';
import {
  applyVariant,
  concurrencyWarning,
  describeVariant,
  engineCapacity,
} from '../../../src/core/servers/variants.js';

const cfg = (input: Record<string, unknown>): ServerConfig => ServerConfigSchema.parse(input);
const ctx = { host: '127.0.0.1', port: 8123, runDir: '/runs/r1' };

describe('vLLM argv', () => {
  it('is the minimal command for a model', () => {
    const plan = vllmAdapter.plan(cfg({ engine: 'vllm', model: 'org/m' }), ctx);
    expect(plan.command).toBe('python3');
    expect(plan.args).toEqual([
      '-m',
      'vllm.entrypoints.openai.api_server',
      '--model',
      'org/m',
      '--host',
      '127.0.0.1',
      '--port',
      '8123',
    ]);
    expect(plan.model).toBe('org/m');
  });

  it('maps every option to its vLLM flag, extra args last', () => {
    const plan = vllmAdapter.plan(
      cfg({
        engine: 'vllm',
        model: 'org/m',
        python: '/venv/bin/python',
        servedModelName: 'm',
        dtype: 'bfloat16',
        quantization: 'fp8',
        kvCacheDtype: 'fp8',
        tensorParallel: 2,
        maxModelLen: 8192,
        gpuMemoryFraction: 0.85,
        maxSeqs: 64,
        prefixCaching: false,
        seed: 7,
        extraArgs: ['--enforce-eager'],
      }),
      ctx,
    );
    expect(plan.command).toBe('/venv/bin/python');
    expect(plan.args.slice(8)).toEqual([
      '--served-model-name',
      'm',
      '--dtype',
      'bfloat16',
      '--quantization',
      'fp8',
      '--kv-cache-dtype',
      'fp8',
      '--tensor-parallel-size',
      '2',
      '--max-model-len',
      '8192',
      '--gpu-memory-utilization',
      '0.85',
      '--max-num-seqs',
      '64',
      '--no-enable-prefix-caching',
      '--seed',
      '7',
      '--enforce-eager',
    ]);
    expect(plan.model).toBe('m');
  });

  it("passes diffusion as vLLM's DiffusionConfig (canvas_length only) and the threshold as a generation-config override", () => {
    const plan = vllmAdapter.plan(
      cfg({ engine: 'vllm', model: 'org/m', prefixCaching: true, diffusion: { blockSize: 16, threshold: 0.9 } }),
      ctx,
    );
    expect(plan.args).toContain('--enable-prefix-caching');
    const json = (flag: string): unknown => JSON.parse(plan.args[plan.args.indexOf(flag) + 1] as string);
    // vllm/config/diffusion.py is a strict pydantic config: canvas_length and max_denoising_steps, nothing else.
    expect(json('--diffusion-config')).toEqual({ canvas_length: 16 });
    expect(json('--override-generation-config')).toEqual({ confidence_threshold: 0.9 });
    expect(plan.messages).toEqual([]);
  });

  it('says that a diffusion algorithm other than the default applies to SGLang only', () => {
    const plan = vllmAdapter.plan(cfg({ engine: 'vllm', model: 'org/m', diffusion: { algorithm: 'Other' } }), ctx);
    expect(plan.messages.join(' ')).toMatch(/SGLang only/);
  });
});

describe('SGLang argv', () => {
  it('maps every option to its SGLang flag and always enables metrics', () => {
    const plan = sglangAdapter.plan(
      cfg({
        engine: 'sglang',
        model: 'org/m',
        servedModelName: 'm',
        tensorParallel: 4,
        quantization: 'fp8',
        dtype: 'bfloat16',
        kvCacheDtype: 'fp8_e5m2',
        gpuMemoryFraction: 0.8,
        maxModelLen: 4096,
        maxSeqs: 32,
        prefixCaching: false,
        seed: 3,
        extraArgs: ['--trust-remote-code'],
      }),
      ctx,
    );
    expect(plan.args).toEqual([
      '-m',
      'sglang.launch_server',
      '--model-path',
      'org/m',
      '--host',
      '127.0.0.1',
      '--port',
      '8123',
      '--served-model-name',
      'm',
      '--tp-size',
      '4',
      '--dtype',
      'bfloat16',
      '--quantization',
      'fp8',
      '--kv-cache-dtype',
      'fp8_e5m2',
      '--mem-fraction-static',
      '0.8',
      '--context-length',
      '4096',
      '--max-running-requests',
      '32',
      '--disable-radix-cache',
      '--random-seed',
      '3',
      '--enable-metrics',
      '--trust-remote-code',
    ]);
    expect(plan.files).toEqual([]);
  });

  it('keeps the radix cache when prefix caching is on or unset', () => {
    expect(sglangAdapter.plan(cfg({ engine: 'sglang', model: 'm', prefixCaching: true }), ctx).args).not.toContain(
      '--disable-radix-cache',
    );
    expect(sglangAdapter.plan(cfg({ engine: 'sglang', model: 'm' }), ctx).args).not.toContain('--disable-radix-cache');
  });

  it('writes the dLLM algorithm config into the run folder and sets max running requests to the sweep maximum', () => {
    const plan = sglangAdapter.plan(cfg({ engine: 'sglang', model: 'inclusionAI/LLaDA2.0-mini', diffusion: {} }), {
      ...ctx,
      maxConcurrency: 64,
    });
    const file = join('/runs/r1', 'dllm-algorithm-config.yaml');
    expect(plan.args).toEqual(
      expect.arrayContaining(['--dllm-algorithm', 'LowConfidence', '--dllm-algorithm-config', file]),
    );
    expect(plan.args[plan.args.indexOf('--max-running-requests') + 1]).toBe('64');
    expect(plan.files).toEqual([{ path: file, content: 'block_size: 32\nthreshold: 0.95\n' }]);
    expect(plan.messages.join(' ')).toMatch(/max-running-requests 64/);
  });

  it('keeps an explicit max-seqs for diffusion and says nothing', () => {
    const plan = sglangAdapter.plan(cfg({ engine: 'sglang', model: 'm', maxSeqs: 8, diffusion: { threshold: 0.9 } }), {
      ...ctx,
      maxConcurrency: 64,
    });
    expect(plan.args[plan.args.indexOf('--max-running-requests') + 1]).toBe('8');
    expect(plan.messages).toEqual([]);
    expect(plan.files[0]?.content).toBe('block_size: 32\nthreshold: 0.9\n');
  });

  it('warns when a diffusion model would be served one request at a time', () => {
    const plan = sglangAdapter.plan(cfg({ engine: 'sglang', model: 'm', diffusion: {} }), ctx);
    expect(plan.args).not.toContain('--max-running-requests');
    expect(plan.messages[0]).toMatch(/one request at a time/);
  });
});

describe('sim argv', () => {
  it('runs the servebench CLI with node in vLLM mimic mode, with a fake GPU state file', () => {
    const plan = simAdapter.plan(
      cfg({ engine: 'sim', model: 'sim-8b', simProfile: 'h200-8b', extraArgs: ['--fault', 'slow-start=100'] }),
      { ...ctx, cliScript: () => '/pkg/dist/cli.js', nodePath: '/usr/bin/node' },
    );
    expect(plan.command).toBe('/usr/bin/node');
    expect(plan.args).toEqual([
      '/pkg/dist/cli.js',
      'sim',
      '--mimic',
      'vllm',
      '--port',
      '8123',
      '--host',
      '127.0.0.1',
      '--model',
      'sim-8b',
      '--profile',
      'h200-8b',
      '--gpu-state',
      '/runs/r1/gpu-state.json',
      '--fault',
      'slow-start=100',
    ]);
    expect(plan.gpuStateFile).toBe('/runs/r1/gpu-state.json');
  });

  it('passes the model parameters it knows to the simulator', () => {
    const plan = simAdapter.plan(
      cfg({
        engine: 'sim',
        maxSeqs: 16,
        maxModelLen: 4096,
        prefixCaching: false,
        seed: 2,
        diffusion: { blockSize: 32, threshold: 0.9 },
      }),
      { ...ctx, cliScript: () => '/c.js', nodePath: process.execPath },
    );
    expect(plan.command).toBe(process.execPath);
    // prettier-ignore
    expect(plan.args.slice(10)).toEqual([
      '--max-model-len', '4096', '--max-num-seqs', '16', '--prefix-caching', 'false', '--seed', '2',
      '--block-size', '32', '--threshold', '0.9',
    ]);
    expect(plan.args).not.toContain('--model');
  });

  it('finds the bundled CLI from the package root', () => {
    const root = findPackageRoot();
    expect(root).toBeDefined();
    const script = findCliScript();
    if (script) expect(script).toBe(join(root as string, 'dist', 'cli.js'));
  });
});

describe('adapters', () => {
  it('know readiness, metrics and which need a ready line', () => {
    expect(adapterFor('vllm').healthPath).toBe('/health');
    expect(adapterFor('vllm').readyLine).toBeUndefined();
    expect(
      adapterFor('sglang').readyLine?.test('[2026-01-01 00:00:00] The server is fired up and ready to roll!'),
    ).toBe(true);
    expect(adapterFor('vllm').metricNames?.running).toContain('vllm:num_requests_running');
    expect(adapterFor('sglang').metricNames?.waiting).toContain('sglang:num_queue_reqs');
    expect(() => adapterFor('attach').plan(cfg({ engine: 'attach' }), ctx)).toThrow();
  });
});

describe('start-up progress from the log', () => {
  it.each([
    ['INFO 08-01 [kv_cache_utils.py:716] GPU KV cache size: 1,234,560 tokens', 'kv-cache', 1234560],
    [
      'INFO 08-01 [kv_cache_utils.py:720] Maximum concurrency for 8,192 tokens per request: 150.70x',
      'max-concurrency',
      150.7,
    ],
    ['INFO Maximum concurrency for 4096 tokens per request: 12.5x', 'max-concurrency', 12.5],
    ['INFO [gpu_model_runner.py:1] Model loading took 14.99 GiB and 3.21 seconds', 'weights', 14.99],
    ['INFO [model_runner.py:1] Loading model weights took 14.2978 GB', 'weights', 14.2978],
    ['INFO Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%', 'graphs', undefined],
  ])('vLLM: %s', (line, key, value) => {
    expect(progress(VLLM_PROGRESS, line)).toEqual({ key, value });
  });

  it.each([
    ['[2026-03-11 13:53:23 TP0] KV Cache is allocated. #tokens: 383872, KV size: 19.36 GB', 'kv-cache', 383872],
    ['[x] Load weight end. type=LlamaForCausalLM, avail mem=63.45 GB, mem usage=15.05 GB.', 'weights', 15.05],
    ['[x] Capture cuda graph begin. This can take up to several minutes. avail mem=12.30 GB', 'graphs', undefined],
  ])('SGLang: %s', (line, key, value) => {
    expect(progress(SGLANG_PROGRESS, line)).toEqual({ key, value });
  });
});

describe('failure classification', () => {
  it.each([
    ['oom', 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB.'],
    [
      'oom',
      'ValueError: Free memory on device cuda:0 (3.25/23.43 GiB) on startup is less than desired GPU memory utilization (0.96, 22.49 GiB).',
    ],
    [
      'oom',
      'ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.',
    ],
    [
      'kv-cache-too-small',
      "ValueError: The model's max seq len (131072) is larger than the maximum number of tokens that can be stored in KV cache (93760).",
    ],
    [
      'kv-cache-too-small',
      "ValueError: To serve at least one request with the models's max seq len (40960), (5.62 GiB KV cache is needed, which is larger than the available KV cache memory (4.50 GiB). Based on the available memory, the estimated maximum model length is 32768.",
    ],
    [
      'model-not-found',
      'Cannot access gated repo for url https://huggingface.co/meta-llama/Llama-3.1-8B/resolve/main/config.json.',
    ],
    ['model-not-found', "ValueError: Invalid repository ID or local directory specified: 'x/y'."],
    ['port-in-use', 'OSError: [Errno 98] Address already in use'],
    ['cuda-mismatch', 'RuntimeError: The NVIDIA driver on your system is too old (found version 12080).'],
    ['cuda-mismatch', 'ImportError: libcudart.so.13: cannot open shared object file: No such file or directory'],
    ['engine-missing', "ModuleNotFoundError: No module named 'vllm'"],
  ])('%s: %s', (kind, line) => {
    const failure = classifyLog(
      ['INFO some start-up line', line, 'RuntimeError: Engine core initialization failed.'],
      'vllm',
    );
    expect(failure?.kind).toBe(kind);
    expect(failure?.fix.length).toBeGreaterThan(10);
  });

  it("classifies SGLang's own out-of-memory line as SGLang's", () => {
    const f = classifyLog(['RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.'], 'sglang');
    expect(f?.kind).toBe('oom');
    expect(f?.fix).toMatch(/mem-fraction-static/);
  });

  it('names the largest max model length that fits', () => {
    const f = classifyLog(
      [
        "ValueError: The model's max seq len (131072) is larger than the maximum number of tokens that can be stored in KV cache (93760).",
      ],
      'vllm',
    );
    expect(f?.fix).toMatch(/--max-model-len to at most 93760/);
  });

  it('tells the user about HF_TOKEN for gated models', () => {
    expect(classifyLog(['huggingface_hub.errors.GatedRepoError: 403 Client Error.'], 'vllm')?.fix).toMatch(/HF_TOKEN/);
  });

  it('falls back to unknown (start) or crashed (run) with the last line', () => {
    const lines = ['INFO loading', 'SomeError: the flux capacitor broke', ''];
    const start = failureFromExit('vllm', lines, { code: 1, signal: null }, 'start');
    expect(start.kind).toBe('unknown');
    expect(start.message).toMatch(/flux capacitor/);
    expect(start.logTail).toEqual(lines);
    expect(failureFromExit('sglang', lines, { code: null, signal: 'SIGSEGV' }, 'run')).toMatchObject({
      kind: 'crashed',
      message: expect.stringMatching(/killed by SIGSEGV while serving/),
    });
  });
});

describe('quantization choices from --help', () => {
  it('reads the argparse choice list (vLLM style with -q alias)', () => {
    const help =
      'options:\n  --quantization {aqlm,awq,fp8,gptq,None}, -q {aqlm,awq,fp8,gptq,None}\n        Method used';
    expect(parseQuantizationChoices(help)).toEqual(['aqlm', 'awq', 'fp8', 'gptq']);
  });

  it('reads the newer "--quantization, -q {...}" form and SGLang', () => {
    expect(parseQuantizationChoices('  --quantization, -q {awq,fp8}\n')).toEqual(['awq', 'fp8']);
    expect(parseQuantizationChoices('  --quantization {awq,fp8,w8a8_int8}\n')).toEqual(['awq', 'fp8', 'w8a8_int8']);
  });

  it('gives up on free-form help', () => {
    expect(parseQuantizationChoices('  --quantization QUANTIZATION  Method used')).toBeUndefined();
  });
});

describe('secrets', () => {
  it('recognises secret variable names', () => {
    for (const name of [
      'HF_TOKEN',
      'HUGGING_FACE_HUB_TOKEN',
      'OPENAI_API_KEY',
      'MY_SECRET_THING',
      'DB_PASSWORD',
      'API_KEY',
    ]) {
      expect(isSecretName(name), name).toBe(true);
    }
    for (const name of ['CUDA_VISIBLE_DEVICES', 'HF_HOME', 'TOKENIZERS_PARALLELISM', 'VLLM_USE_V1']) {
      expect(isSecretName(name), name).toBe(false);
    }
  });

  it('redacts env values, --api-key values and URL passwords from a config', () => {
    const config = cfg({
      engine: 'vllm',
      model: 'm',
      env: { HF_TOKEN: 'hf_abcdefghijklmnopqrstuvwxyz', CUDA_VISIBLE_DEVICES: '0' },
      extraArgs: ['--api-key', 'sk-verysecretvalue', '--api-key=other-secret', '--enforce-eager'],
    });
    const safe = redact(config);
    expect(safe.env).toEqual({ HF_TOKEN: '***', CUDA_VISIBLE_DEVICES: '0' });
    expect(safe.extraArgs).toEqual(['--api-key', '***', '--api-key=***', '--enforce-eager']);
    expect(config.env?.HF_TOKEN).toBe('hf_abcdefghijklmnopqrstuvwxyz'); // the original is untouched
    expect(redact({ url: 'http://user:pa55word@host:8000/v1' }).url).toBe('http://user:***@host:8000/v1');
    expect(redactArgv(['--api-key'])).toEqual(['--api-key']);
  });

  it('redacts known values and secret-shaped tokens from log lines', () => {
    const redactor = createRedactor(
      cfg({ engine: 'vllm', model: 'm', env: { MY_SECRET: 'correct-horse' }, extraArgs: ['--api-key', 'letmein!'] }),
      { OPENAI_API_KEY: 'parent-key-123' },
    );
    const line =
      "args: {'api_key': 'letmein!', 'x': 'correct-horse', 'y': 'parent-key-123'} hf_ABCDEFGHIJKLMNOPQRST Bearer abc.def.ghi";
    const out = redactor(line);
    for (const s of ['letmein!', 'correct-horse', 'parent-key-123', 'hf_ABCDEFGHIJKLMNOPQRST', 'abc.def.ghi'])
      expect(out).not.toContain(s);
    expect(redactLine('--api-key=abc --api-key xyz')).toBe('--api-key=*** --api-key ***');
  });
});

describe('server sweeps', () => {
  const base = cfg({ engine: 'sglang', model: 'm', diffusion: { blockSize: 32, threshold: 0.95 }, env: { A: '1' } });

  it('lays a variant over the base, merging objects', () => {
    const v = applyVariant(base, { diffusion: { threshold: 0.9 } });
    expect(v.diffusion).toEqual({ algorithm: 'LowConfidence', blockSize: 32, threshold: 0.9 });
    expect(v.model).toBe('m');
    expect(applyVariant(base, { quantization: 'fp8', env: { B: '2' } })).toMatchObject({
      quantization: 'fp8',
      env: { A: '1', B: '2' },
    });
    expect(base.diffusion?.threshold).toBe(0.95);
  });

  it('rejects unknown fields and invalid values in one line', () => {
    expect(() => applyVariant(base, { treshold: 0.9 })).toThrow(ServerConfigError);
    expect(() => applyVariant(base, { treshold: 0.9 })).toThrow(/unknown field 'treshold'/);
    expect(() => applyVariant(base, { diffusion: { threshold: 2 } })).toThrow(/diffusion\.threshold/);
  });

  it('labels variants briefly, never with env values', () => {
    expect(describeVariant({ diffusion: { threshold: 0.9 } })).toBe('threshold=0.9');
    expect(describeVariant({ quantization: 'fp8', maxSeqs: 64 })).toBe('quantization=fp8, maxSeqs=64');
    expect(describeVariant({ env: { HF_TOKEN: 'hf_x' } })).toBe('env HF_TOKEN');
    expect(describeVariant({})).toBe('base');
  });
});

describe('concurrency warning', () => {
  const info = { engine: 'vllm' as const, baseUrl: 'http://x', model: 'm', simulated: false };
  // What the fake vLLM logs: 51,200 KV tokens, "Maximum concurrency for 4096 tokens per request: 12.5x".
  const vllm = { ...info, kvCacheTokens: 51_200, maxConcurrency: 12.5, maxConcurrencyTokens: 4096 };

  it("sizes the KV cache for this run's requests, not for max-model-len requests", () => {
    // 12.5 requests of 4096 tokens, but 50 of 1024: a sweep to 32 with short requests is fine.
    expect(concurrencyWarning(vllm, 32, 1024)).toBeUndefined();
    expect(concurrencyWarning(vllm, 50, 1024)).toBeUndefined();
    expect(engineCapacity(vllm, 1024)?.requests).toBe(50);
    const warning = concurrencyWarning(vllm, 64, 1024);
    expect(warning).toBe(
      'concurrency 64 exceeds the 50 concurrent requests of up to 1024 tokens the engine can hold ' +
        '(its KV cache of 51200 tokens holds 50 requests of 1024 tokens); beyond that requests queue or are ' +
        'preempted, so those levels measure waiting as well as serving',
    );
    // Longer requests than max-model-len's share: fewer fit.
    expect(concurrencyWarning(vllm, 8, 8192)).toMatch(/^concurrency 8 exceeds the 6 concurrent requests of up to 8192/);
  });

  it('takes the smaller of the KV cache and max-num-seqs / max-running-requests', () => {
    expect(concurrencyWarning(vllm, 32, 1024, 16)).toMatch(
      /concurrency 32 exceeds the 16 concurrent requests .*at most 16 sequences at once \(--max-seqs\).*queue or are preempted/,
    );
    expect(concurrencyWarning(vllm, 16, 1024, 16)).toBeUndefined();
    expect(concurrencyWarning(vllm, 40, 1024, 256)).toBeUndefined();
    expect(concurrencyWarning(vllm, 64, 1024, 256)).toMatch(/exceeds the 50 .*KV cache/);
    // SGLang logs its max_running_requests even when nobody configured it.
    const sglang = {
      ...info,
      engine: 'sglang' as const,
      kvCacheTokens: 409_600,
      maxConcurrency: 48,
      maxRunningRequests: 48,
    };
    expect(concurrencyWarning(sglang, 48, 2048)).toBeUndefined();
    expect(concurrencyWarning(sglang, 64, 2048)).toMatch(/exceeds the 48 .*max_running_requests/);
  });

  it("rescales vLLM's maximum concurrency only when it knows the request size it was for", () => {
    const noKv = { ...info, maxConcurrency: 12.5, maxConcurrencyTokens: 4096 };
    expect(engineCapacity(noKv, 1024)?.requests).toBe(50);
    expect(concurrencyWarning(noKv, 50, 1024)).toBeUndefined();
    expect(concurrencyWarning(noKv, 51, 1024)).toMatch(
      /exceeds the 50 .*reported room for 12\.5 requests of 4096 tokens, i\.e\. 50 of 1024/,
    );
    // A bare X without its N says nothing about this run's requests: no warning, however large the sweep.
    expect(concurrencyWarning({ ...info, maxConcurrency: 12.5 }, 1024, 1024)).toBeUndefined();
    expect(concurrencyWarning(info, 1024, 1024)).toBeUndefined();
    expect(engineCapacity(info, 1024)).toBeUndefined();
    // Only max-seqs known.
    expect(concurrencyWarning(info, 300, 1024, 256)).toMatch(/exceeds the 256 /);
  });
});

describe('presets', () => {
  it('lists the shipped presets, all valid server configs', () => {
    const presets = listPresets();
    const names = presets.map((p) => p.name);
    expect(names).toEqual(
      expect.arrayContaining(['llama-3.1-8b-vllm-bf16', 'qwen2.5-7b-awq-int4-vllm', 'sglang-llama-8b', 'sim-demo']),
    );
    for (const p of presets) {
      expect(p.description.length, p.name).toBeGreaterThan(10);
      expect(ServerConfigSchema.safeParse(p.server).success, p.name).toBe(true);
    }
  });

  it('has a block-diffusion preset on SGLang with block size 32 and threshold 0.95', () => {
    const diffusion = listPresets().find((p) => p.server.diffusion);
    expect(diffusion?.server).toMatchObject({ engine: 'sglang', diffusion: { blockSize: 32, threshold: 0.95 } });
  });

  it('loads one by name and names the available ones for a typo', () => {
    expect(loadPreset('sim-demo')).toMatchObject({ engine: 'sim' });
    expect(() => loadPreset('sim-dmeo')).toThrow(/unknown --preset 'sim-dmeo'; available: .*sim-demo/);
  });

  it('reports an invalid preset file in one line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'presets-'));
    await writeFile(join(dir, 'bad.yaml'), 'server:\n  engine: tgi\n');
    expect(() => loadPreset('bad', dir)).toThrow(/preset 'bad' is invalid/);
  });
});
