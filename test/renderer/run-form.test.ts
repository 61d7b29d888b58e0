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
    const built = buildConfig({
      ...defaultForm(),
      engine: 'vllm',
      model: 'meta-llama/Llama-3.1-8B-Instruct',
      quantization: 'awq',
      maxSeqs: '64',
      python: '/opt/venv/bin/python',
      diffusion: true,
      blockSize: '16',
      threshold: '0.9',
      concurrency: '1, 4 16',
      requestsPerRound: '40',
      warmup: '0',
      gpuPricePerHour: '2',
      utilizationPct: '60',
    });
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

  it('refuses only what cannot be sent, naming the field', () => {
    expect(buildConfig({ ...defaultForm(), concurrency: '1,x' })).toMatchObject({ ok: false, field: 'concurrency' });
    expect(buildConfig({ ...defaultForm(), concurrency: ' ' })).toMatchObject({ ok: false, field: 'concurrency' });
    expect(buildConfig({ ...defaultForm(), rounds: 'three' })).toMatchObject({ ok: false, field: 'rounds' });
    expect(buildConfig({ ...defaultForm(), engine: 'attach' })).toMatchObject({ ok: false, field: 'url' });
    expect(buildConfig({ ...defaultForm(), engine: 'sglang' })).toMatchObject({ ok: false, field: 'model' });
    // Ranges are the service's to judge (its message is the one shown).
    expect(buildConfig({ ...defaultForm(), concurrency: '0' }).ok).toBe(true);
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
      model: 'inclusionAI/LLaDA2.0-mini',
      diffusion: true,
      blockSize: '32',
      threshold: '0.95',
    });
    const built = buildConfig({ ...form, threshold: '0.9' }, preset.server);
    expect(built.ok && built.config.server).toEqual({
      engine: 'sglang',
      model: 'inclusionAI/LLaDA2.0-mini',
      diffusion: { algorithm: 'LowConfidence', blockSize: 32, threshold: 0.9 },
      extraArgs: ['--trust-remote-code'],
    });
    const cleared = applyPreset({ ...form, concurrency: '1,8' }, undefined);
    expect(cleared.preset).toBe('');
    // "None" clears the preset's server fields but keeps the sweep the user typed.
    expect(cleared.model).toBe(defaultForm().model);
    expect(cleared.diffusion).toBe(false);
    expect(cleared.concurrency).toBe('1,8');
  });
});

describe('new-run form: every server setting, environment and server sweeps', () => {
  it('sends the engine settings the CLI has (tensor parallel, max model length, memory, KV cache, extra args)', () => {
    const built = buildConfig({
      ...defaultForm(),
      engine: 'vllm',
      model: 'org/m',
      tensorParallel: '2',
      maxModelLen: '8192',
      gpuMemoryFraction: '0.85',
      kvCacheDtype: 'fp8',
      extraArgs: "--trust-remote-code --chat-template '/a b.jinja'",
      prefixCaching: 'off',
      startTimeout: '45m',
    });
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
    // The simulator's extra arguments are its own flags.
    const sim = buildConfig({ ...defaultForm(), extraArgs: '--fault crash-after=3' });
    expect(sim.ok && sim.config.server).toEqual({ engine: 'sim', simArgs: ['--fault', 'crash-after=3'] });
  });

  it('sends environment rows, refusing a name that is no variable name', () => {
    const env = [
      { name: 'CUDA_VISIBLE_DEVICES', value: '0,1' },
      { name: 'HF_TOKEN', value: 'hf_x' },
      { name: '', value: '' },
    ];
    const built = buildConfig({ ...defaultForm(), engine: 'sglang', model: 'm', env });
    expect(built.ok && built.config.server?.env).toEqual({ CUDA_VISIBLE_DEVICES: '0,1', HF_TOKEN: 'hf_x' });
    expect(buildConfig({ ...defaultForm(), env: [{ name: 'BAD NAME', value: 'x' }] })).toMatchObject({
      ok: false,
      field: 'env',
    });
  });

  it('turns server sweeps into labelled setups and server variants; settings of another engine wait', () => {
    const form = {
      ...defaultForm(),
      engine: 'vllm' as const,
      model: 'm',
      vary: [
        { key: 'tp', values: '1,2' },
        { key: 'gpu-memory', values: '0.8 0.9' },
        { key: 'threads', values: '8' },
      ],
    };
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
    expect(buildConfig({ ...form, vary: [{ key: 'tp', values: '1e3' }] })).toMatchObject({ ok: false, field: 'vary' });
    expect(buildConfig({ ...form, maxModelLen: '0x10' })).toMatchObject({ ok: false, field: 'maxModelLen' });
  });
});
