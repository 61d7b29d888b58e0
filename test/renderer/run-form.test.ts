import { formOf } from './form-of.js';
import { describe, expect, it } from 'vitest';
import { applyPreset, buildConfig, defaultForm, parseList, varyLevels } from '../../src/renderer/lib/run-form.js';
import { BenchConfigSchema } from '../../src/shared/config.js';
import type { PresetSummary } from '../../src/shared/contract.js';

describe('new-run form -> run config', () => {
  it('turns the default form into a valid simulator config', () => {
    const built = buildConfig(defaultForm());
    expect(built.ok).toBe(true);
    if (!built.ok) return;
    expect(built.config).toMatchObject({
      concurrency: [1, 4, 16],
      inputLen: [512],
      outputLen: [24],
      rounds: 3,
      server: { engine: 'sim' },
    });
    expect(BenchConfigSchema.safeParse(built.config).success).toBe(true);
  });

  it('sends sweep, cost and server fields, leaving empty ones to the defaults', () => {
    const built = buildConfig(
      formOf({
        engine: 'vllm',
        model: 'meta-llama/Llama-3.1-8B-Instruct',
        quantization: 'awq',
        'max-seqs': '64',
        python: '/opt/venv/bin/python',
        diffusion: true,
        'block-size': '16',
        threshold: '0.9',
        concurrency: '1, 4 16',
        'requests-per-round': '40',
        warmup: '0',
        'gpu-price-per-hour': '2',
        utilization: '60',
      }),
    );
    expect(built).toEqual({
      ok: true,
      config: {
        label: 'run',
        concurrency: [1, 4, 16],
        inputLen: [512],
        outputLen: [24],
        rounds: 3,
        requestsPerRound: 40,
        warmup: 0,
        gpuPricePerHour: 2,
        utilization: 0.6,
        server: {
          engine: 'vllm',
          model: 'meta-llama/Llama-3.1-8B-Instruct',
          quantization: 'awq',
          maxSeqs: 64,
          python: '/opt/venv/bin/python',
          diffusion: { blockSize: 16, threshold: 0.9 },
        },
      },
    });
  });

  it('refuses what the schema refuses, in the words the CLI uses, naming the field by its label', () => {
    expect(buildConfig(formOf({ concurrency: '1,x' }))).toMatchObject({ ok: false, field: 'concurrency' });
    expect(buildConfig(formOf({ concurrency: ' ' }))).toMatchObject({ ok: false, field: 'concurrency' });
    expect(buildConfig(formOf({ rounds: 'three' }))).toMatchObject({ ok: false, field: 'rounds' });
    expect(buildConfig(formOf({ engine: 'attach' }))).toMatchObject({ ok: false, field: 'url' });
    expect(buildConfig(formOf({ engine: 'sglang' }))).toMatchObject({ ok: false, field: 'model' });
    // One validation: the form checks ranges with the schema, as the CLI does, in the same words.
    expect(buildConfig(formOf({ concurrency: '0' }))).toEqual({
      ok: false,
      field: 'concurrency',
      error: "Concurrency must be a comma-separated list of positive integers written plainly (got '0')",
    });
    expect(buildConfig(formOf({ rounds: '500' }))).toMatchObject({
      error: expect.stringMatching(/^Rounds 500 is too large: at most 100 \(/),
    });
    expect(parseList('1,,2 ,4')).toEqual([1, 2, 4]);
  });

  it('applies a preset and keeps what the form has no field for', () => {
    const preset: PresetSummary = {
      name: 'llada',
      description: 'block diffusion',
      server: {
        engine: 'sglang',
        model: 'inclusionAI/LLaDA2.0-mini',
        diffusion: { algorithm: 'LowConfidence', blockSize: 32, threshold: 0.95 },
        extraArgs: ['--trust-remote-code'],
      },
    };
    const form = applyPreset(defaultForm(), preset);
    expect(form).toMatchObject({
      preset: 'llada',
      engine: 'sglang',
      diffusion: true,
      values: { model: 'inclusionAI/LLaDA2.0-mini', 'block-size': '32', threshold: '0.95' },
    });
    const built = buildConfig(formOf({ threshold: '0.9' }, form), preset.server);
    expect(built.ok && built.config.server).toEqual({
      engine: 'sglang',
      model: 'inclusionAI/LLaDA2.0-mini',
      diffusion: { algorithm: 'LowConfidence', blockSize: 32, threshold: 0.9 },
      extraArgs: ['--trust-remote-code'],
    });
    const cleared = applyPreset(formOf({ concurrency: '1,8' }, form), undefined);
    expect(cleared.preset).toBe('');
    // "None" clears the preset's server fields but keeps the sweep the user typed.
    expect(cleared.values.model).toBe(defaultForm().values.model);
    expect(cleared.diffusion).toBe(false);
    expect(cleared.values.concurrency).toBe('1,8');
  });
});

describe('new-run form: every server setting, environment and server sweeps', () => {
  it('sends the engine settings the CLI has (tensor parallel, max model length, memory, KV cache, extra args)', () => {
    const built = buildConfig(
      formOf({
        engine: 'vllm',
        model: 'org/m',
        tp: '2',
        'max-model-len': '8192',
        'gpu-memory': '0.85',
        'kv-cache-dtype': 'fp8',
        'server-arg': "--trust-remote-code --chat-template '/a b.jinja'",
        'prefix-caching': 'off',
        'start-timeout': '45m',
      }),
    );
    expect(built.ok && built.config.server).toEqual({
      engine: 'vllm',
      model: 'org/m',
      tensorParallel: 2,
      maxModelLen: 8192,
      gpuMemoryFraction: 0.85,
      kvCacheDtype: 'fp8',
      extraArgs: ['--trust-remote-code', '--chat-template', '/a b.jinja'],
      prefixCaching: false,
      startTimeoutMs: 45 * 60_000,
    });
    // The simulator's extra arguments are its own flags, sent like any engine's.
    const sim = buildConfig(formOf({ 'server-arg': '--fault crash-after=3' }));
    expect(sim.ok && sim.config.server).toEqual({ engine: 'sim', extraArgs: ['--fault', 'crash-after=3'] });
  });

  it('sends environment rows, refusing a name that is no variable name', () => {
    const env = [
      { name: 'CUDA_VISIBLE_DEVICES', value: '0,1' },
      { name: 'HF_TOKEN', value: 'hf_x' },
      { name: '', value: '' },
    ];
    const built = buildConfig(formOf({ engine: 'sglang', model: 'm', env }));
    expect(built.ok && built.config.server?.env).toEqual({ CUDA_VISIBLE_DEVICES: '0,1', HF_TOKEN: 'hf_x' });
    expect(buildConfig(formOf({ env: [{ name: 'BAD NAME', value: 'x' }] }))).toMatchObject({
      ok: false,
      field: 'env',
    });
  });

  it('turns server sweeps into labelled setups and server variants; settings of another engine wait', () => {
    const form = formOf({
      engine: 'vllm' as const,
      model: 'm',
      vary: [
        { key: 'tp', values: '1,2' },
        { key: 'gpu-memory', values: '0.8 0.9' },
        { key: 'threads', values: '8' },
      ],
    });
    expect(varyLevels(form)).toEqual({
      ok: true,
      labels: ['tp=1 · gpu-memory=0.8', 'tp=1 · gpu-memory=0.9', 'tp=2 · gpu-memory=0.8', 'tp=2 · gpu-memory=0.9'],
    });
    const built = buildConfig(form);
    expect(built.ok && built.config.serverVariants).toEqual([
      { tensorParallel: 1, gpuMemoryFraction: 0.8 },
      { tensorParallel: 1, gpuMemoryFraction: 0.9 },
      { tensorParallel: 2, gpuMemoryFraction: 0.8 },
      { tensorParallel: 2, gpuMemoryFraction: 0.9 },
    ]);
    // The same number parser as the CLI: 1e3 is no tensor parallel size.
    expect(buildConfig(formOf({ vary: [{ key: 'tp', values: '1e3' }] }, form))).toMatchObject({
      ok: false,
      field: 'vary',
    });
    expect(buildConfig(formOf({ 'max-model-len': '0x10' }, form))).toMatchObject({ ok: false, field: 'max-model-len' });
  });
});
