import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EngineKindSchema, ServerConfigSchema, type ServerConfig } from '../../../src/shared/config.js';
import { ENGINE_FACTS, ENGINE_KINDS, LAUNCHABLE_ENGINES } from '../../../src/shared/engines.js';
import { ENGINES, engineFor, LLAMACPP_PROGRESS, splitCommandLine } from '../../../src/core/servers/engines/index.js';
import { progress } from './helpers.js';
import { classifyLog } from '../../../src/core/servers/failures.js';
import { SERVER_OPTIONS_HELP, serverConfigFromFlags } from '../../../src/cli/server-options.js';
import { engineSampleFromMetrics } from '../../../src/core/telemetry/engine-metrics.js';
import { parsePrometheusText } from '../../../src/core/telemetry/prometheus-parser.js';
import { buildConfig, ENGINE_PICKER } from '../../../src/renderer/lib/run-form.js';
import { formOf } from '../../renderer/form-of.js';

const cfg = (input: Record<string, unknown>): ServerConfig => ServerConfigSchema.parse(input);
const ctx = { host: '127.0.0.1', port: 8123, runDir: '/runs/r1' };

describe('the engine registry', () => {
  it('is the one list behind the EngineKind enum, the CLI --engine choices and the app picker', () => {
    const registry = ENGINES.map((e) => e.kind);
    expect(registry).toEqual([...ENGINE_KINDS]);
    expect(EngineKindSchema.options).toEqual(registry);
    // The app's picker is built from the engines' facts, the same list in the same order.
    expect(ENGINE_FACTS.map((d) => d.kind)).toEqual(registry);
    expect(ENGINE_PICKER.map((e) => e.id)).toEqual(registry);
    const form = readFileSync(new URL('../../../src/renderer/components/NewRunForm.svelte', import.meta.url), 'utf8');
    expect(form).toMatch(/const engines = ENGINE_PICKER;/);
    // CLI: every engine but one chosen by a setting of its own (attach: --url) is an --engine choice, named in the help.
    const chosen = ENGINE_FACTS.filter((e) => e.chosenBy).map((e) => e.kind);
    expect(chosen).toEqual(['attach']);
    expect([...LAUNCHABLE_ENGINES, ...chosen].sort()).toEqual([...registry].sort());
    expect(SERVER_OPTIONS_HELP).toContain(`--engine ${LAUNCHABLE_ENGINES.join('|')}`);
    for (const kind of LAUNCHABLE_ENGINES) {
      const flags: Record<string, unknown> = { engine: kind, model: '/m.gguf' };
      if (kind === 'command') flags.cmd = 'srv --port {port}';
      expect(serverConfigFromFlags(flags).engine).toBe(kind);
    }
    expect(() => serverConfigFromFlags({ engine: 'attach' })).toThrow(/use --url/);
  });

  it('gives every engine a description, readiness path and a plan (attach excepted)', () => {
    for (const e of ENGINES) {
      expect(e.description.name.length).toBeGreaterThan(2);
      expect(e.healthPath.startsWith('/')).toBe(true);
      expect(e.spawnFix.length).toBeGreaterThan(5);
    }
  });
});

describe('llama.cpp argv', () => {
  it('passes a .gguf path with -m and every llama-server setting, --metrics always', () => {
    const plan = engineFor('llamacpp').plan(
      cfg({
        engine: 'llamacpp',
        model: '/models/q4.gguf',
        llamaServer: '/opt/llama/llama-server',
        servedModelName: 'q4',
        gpuLayers: 99,
        contextSize: 8192,
        maxSeqs: 4,
        continuousBatching: true,
        flashAttention: 'on',
        kvCacheDtype: 'q8_0',
        threads: 8,
        seed: 3,
        extraArgs: ['--jinja'],
      }),
      ctx,
    );
    expect(plan.command).toBe('/opt/llama/llama-server');
    expect(plan.args).toEqual([
      '-m', '/models/q4.gguf', '--host', '127.0.0.1', '--port', '8123', '--alias', 'q4',
      '--n-gpu-layers', '99', '--ctx-size', '8192', '--parallel', '4', '--cont-batching', '--flash-attn', 'on',
      '--cache-type-k', 'q8_0', '--cache-type-v', 'q8_0', '--threads', '8', '--seed', '3', '--metrics', '--jinja',
    ]); // prettier-ignore
    expect(plan.model).toBe('q4');
  });

  it('takes a Hugging Face repo with -hf, llama-server from PATH, and names the settings it ignores', () => {
    const plan = engineFor('llamacpp').plan(
      cfg({ engine: 'llamacpp', model: 'ggml-org/gemma-3-1b-it-GGUF', quantization: 'awq', tensorParallel: 2 }),
      ctx,
    );
    expect(plan.command).toBe('llama-server');
    expect(plan.args.slice(0, 2)).toEqual(['-hf', 'ggml-org/gemma-3-1b-it-GGUF']);
    expect(plan.model).toBeUndefined(); // asked from /v1/models once ready
    expect(plan.messages.join('\n')).toMatch(/ignores --quantization/);
    expect(plan.messages.join('\n')).toMatch(/ignores --tp/);
  });

  it('warns before the run when a request does not fit the per-slot context (context / slots)', () => {
    const e = engineFor('llamacpp');
    const config = cfg({ engine: 'llamacpp', model: 'm.gguf', contextSize: 4096, maxSeqs: 4 });
    expect(e.preRunWarnings?.(config, { inputTokens: 512, outputTokens: 256 })).toEqual([]);
    const [warning] = e.preRunWarnings?.(config, { inputTokens: 1024, outputTokens: 256 }) ?? [];
    expect(warning).toMatch(/per-slot context of 1024 \(--ctx-size 4096 \/ 4 slots\)/);
    expect(warning).toMatch(/at least 5120/);
    // No -c: the context comes from the model; nothing to check before the run.
    expect(
      e.preRunWarnings?.(cfg({ engine: 'llamacpp', model: 'm.gguf' }), { inputTokens: 9e5, outputTokens: 1 }),
    ).toEqual([]);
  });
});

describe("llama.cpp's --version", () => {
  const version = (out: string): string | undefined => {
    const probe = engineFor('llamacpp').probe;
    return probe?.type === 'binary' ? probe.version(out) : undefined;
  };
  it.each([
    ['version: 6500 (6c7a4415)\nbuilt with cc (GCC) 13.3.0 for x86_64-linux-gnu', 'b6500 (6c7a4415)'],
    // A source tarball or `git archive`: cmake/build-info.cmake finds no git and keeps 0 (unknown).
    ['version: 0 (unknown)\nbuilt with GNU 12.2.0 for Linux x86_64', 'unknown'],
    // A distribution's package sets its own commit word.
    ['version: 5882 (debian)\nbuilt with GNU 14.2.0 for Linux x86_64', 'b5882 (debian)'],
    ['some other answer', 'unknown'],
  ])('%s', (out, expected) => {
    expect(version(out)).toBe(expected);
  });
});

describe("llama.cpp's log", () => {
  it.each([
    ["srv    load_model: loading model '/models/q4.gguf'", 'loading', undefined],
    [
      'llama_kv_cache: size =  512.00 MiB (  4096 cells,  32 layers,  4/4 seqs), K (f16):  256.00 MiB, V (f16):  256.00 MiB',
      'kv-cache',
      4096,
    ],
    ['srv          init: initializing slots, n_slots = 4', 'max-running-requests', 4],
    ['srv  llama_server: server is listening on http://127.0.0.1:8080', 'http', undefined],
  ])('%s', (line, key, value) => {
    expect(progress(LLAMACPP_PROGRESS, line)).toEqual({ key, value });
  });

  it.each([
    [
      'oom',
      'ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9000.00 MiB on device 0: cudaMalloc failed: out of memory',
    ],
    ['oom', 'alloc_tensor_range: failed to allocate CUDA0 buffer of size 9437184000'],
    ['model-not-found', "gguf_init_from_file: failed to open GGUF file '/models/missing.gguf'"],
    ['port-in-use', "couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 8080"],
  ])('classifies %s', (kind, line) => {
    const f = classifyLog(
      ['build: 6500 (abc1234)', line, 'srv  llama_server: exiting due to model loading error'],
      'llamacpp',
    );
    expect(f?.kind).toBe(kind);
    expect(f?.fix).not.toMatch(/--python/);
  });
});

describe('the command engine', () => {
  it('splits a command line like a shell, without running one', () => {
    expect(splitCommandLine(`srv --a "b c" 'd "e"' f\\ g $HOME;rm`)).toEqual([
      'srv',
      '--a',
      'b c',
      'd "e"',
      'f g',
      '$HOME;rm',
    ]);
    expect(() => splitCommandLine('srv "open')).toThrow(/unclosed/);
  });

  it('fills {port}, {host} and {model} and uses its own health path', () => {
    const plan = engineFor('command').plan(
      cfg({
        engine: 'command',
        model: 'org/m',
        command: ['tgi', '--port', '{port}', '--hostname={host}', '--model-id', '{model}'],
        healthPath: '/ready',
      }),
      ctx,
    );
    expect([plan.command, ...plan.args]).toEqual([
      'tgi',
      '--port',
      '8123',
      '--hostname=127.0.0.1',
      '--model-id',
      'org/m',
    ]);
    expect(plan.healthPath).toBe('/ready');
    expect(plan.model).toBe('org/m');
  });

  it('refuses {model} without --model, and says when the port is not passed', () => {
    expect(() => engineFor('command').plan(cfg({ engine: 'command', command: ['x', '{model}'] }), ctx)).toThrow(
      /--model/,
    );
    expect(engineFor('command').plan(cfg({ engine: 'command', command: ['x'] }), ctx).messages[0]).toMatch(/\{port\}/);
  });

  it('comes from --cmd and --health on the command line', () => {
    const c = serverConfigFromFlags({ engine: 'command', cmd: 'ollama serve', health: '/' });
    expect(c).toMatchObject({ engine: 'command', command: ['ollama', 'serve'], healthPath: '/' });
    expect(() => serverConfigFromFlags({ engine: 'command' })).toThrow(/--cmd/);
    expect(() => serverConfigFromFlags({ engine: 'command', cmd: 'x', health: 'health' })).toThrow(
      /--health must be a path/,
    );
  });
});

describe('engine metrics come from the modules', () => {
  it("reads llama.cpp's and SGLang's counters", () => {
    const llama = engineSampleFromMetrics(
      parsePrometheusText(
        'llamacpp:requests_processing 2\nllamacpp:requests_deferred 1\nllamacpp:kv_cache_usage_ratio 0.25\nllamacpp:tokens_predicted_total 900\n',
      ),
      0,
    );
    expect(llama).toEqual({
      tMs: 0,
      running: 2,
      waiting: 1,
      kvUsage: 0.25,
      preemptionsTotal: null,
      prefixCacheHitsTotal: null,
      generationTokensTotal: 900,
    });
    const sglang = engineSampleFromMetrics(
      parsePrometheusText(
        'sglang:num_retracted_reqs 7\nsglang:num_retracted_requests_total 3\nsglang:realtime_tokens_total{mode="prefill_cache"} 40\nsglang:realtime_tokens_total{mode="decode"} 99\n',
      ),
      0,
    );
    expect(sglang.preemptionsTotal).toBe(3);
    expect(sglang.prefixCacheHitsTotal).toBe(40);
  });
});

describe("the app's form", () => {
  it('sends the llama.cpp and command fields only for their engine', () => {
    const llama = buildConfig(
      formOf({
        engine: 'llamacpp',
        model: '/m.gguf',
        'llama-server': '/bin/llama-server',
        'ctx-size': '8192',
        'gpu-layers': '99',
        python: '/py',
      }),
    );
    expect(llama.ok && llama.config.server).toMatchObject({
      engine: 'llamacpp',
      llamaServer: '/bin/llama-server',
      contextSize: 8192,
      gpuLayers: 99,
    });
    expect(llama.ok && (llama.config.server as Record<string, unknown>).python).toBeUndefined();
    const command = buildConfig(formOf({ engine: 'command', cmd: 'srv --port {port} --name "a b"' }));
    expect(command.ok && command.config.server).toMatchObject({
      command: ['srv', '--port', '{port}', '--name', 'a b'],
    });
    expect(buildConfig(formOf({ engine: 'command' }))).toMatchObject({ ok: false, field: 'cmd' });
    expect(buildConfig(formOf({ engine: 'llamacpp' }))).toMatchObject({ ok: false, field: 'model' });
  });
});
