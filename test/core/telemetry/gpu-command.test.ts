import { afterEach, describe, expect, it, vi } from 'vitest';
import { gpuCommand } from '../../../src/cli/gpu-command.js';
import { UserError } from '../../../src/core/errors.js';
import { FAKE_NVIDIA_SMI } from './helpers.js';

function captureLog() {
  const lines: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
    lines.push(args.join(' '));
  });
  return lines;
}

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe('servebench gpu', () => {
  it('prints GPUs, processes and one classified sample', async () => {
    vi.stubEnv('FAKE_NVSMI_SCENARIO', 'rtx4090-555-thermal');
    const out = captureLog();
    expect(await gpuCommand(['--nvidia-smi', FAKE_NVIDIA_SMI])).toBe(0);
    const text = out.join('\n');
    expect(text).toMatch(
      /GPU 0: NVIDIA GeForce RTX 4090, driver 555\.42\.02, CUDA 12\.5, 24564 MiB, power limit 450 W, max SM clock 3120 MHz/,
    );
    expect(text).toMatch(/48213 python3 \(18210 MiB\)/);
    expect(text).toMatch(/throttle full-speed \(0x0: none\)/);
  });

  it('--json prints the snapshot; SERVEBENCH_NVIDIA_SMI is honoured', async () => {
    vi.stubEnv('FAKE_NVSMI_SCENARIO', 'a100x2-550-power-cap');
    vi.stubEnv('SERVEBENCH_NVIDIA_SMI', FAKE_NVIDIA_SMI);
    const out = captureLog();
    expect(await gpuCommand(['--json'])).toBe(0);
    const snap = JSON.parse(out.join('\n')) as { source: string; gpus: unknown[]; samples: Array<{ class: string }> };
    expect(snap.source).toBe('nvidia-smi');
    expect(snap.gpus).toHaveLength(2);
    expect(snap.samples).toHaveLength(2);
  });

  it('without nvidia-smi: one line naming the fix, exit 2', async () => {
    vi.stubEnv('SERVEBENCH_NVIDIA_SMI', '');
    vi.stubEnv('PATH', '/nonexistent');
    const err = await gpuCommand([]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).exitCode).toBe(2);
    expect((err as UserError).message).toBe(
      'nvidia-smi not found; install the NVIDIA driver or pass --nvidia-smi PATH',
    );
  });

  it('rejects unknown flags as a usage error', async () => {
    await expect(gpuCommand(['--frobnicate'])).rejects.toBeInstanceOf(UserError);
  });
});
