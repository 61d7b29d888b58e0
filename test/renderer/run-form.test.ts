import { describe, expect, it } from 'vitest';
import { applyPreset, buildConfig, defaultForm, parseList } from '../../src/renderer/lib/run-form.js';
import { BenchConfigSchema } from '../../src/shared/config.js';
import type { PresetSummary } from '../../src/shared/contract.js';

describe('new-run form -> run config', () => {
  it('turns the default form into a valid simulator config', () => {
    const built = buildConfig(defaultForm());
    expect(built.ok).toBe(true);
    if (!built.ok) return;
    expect(built.config).toMatchObject({
      concurrency: [1, 2, 4, 8, 16],
      inputLen: [512],
      outputLen: [256],
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
        outputLen: [256],
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
