import { describe, expect, it } from 'vitest';
import { gpuSource } from '../../../src/core/default-deps.js';

describe('gpuSource: which nvidia-smi a run reads', () => {
  it('an explicit --nvidia-smi is honoured even when the simulator runs', () => {
    const got = gpuSource('/opt/bin/nvidia-smi', '/tmp/gpu-state.json', { PATH: '/bin' });
    expect(got.nvidiaSmiPath).toBe('/opt/bin/nvidia-smi');
    expect(got.env.SERVEBENCH_FAKE_GPU_STATE).toBeUndefined();
  });

  it("the simulator's fake GPU is used only when no nvidia-smi was given", () => {
    const got = gpuSource(undefined, '/tmp/gpu-state.json', { PATH: '/bin' });
    expect(got.nvidiaSmiPath).toMatch(/fake-nvidia-smi$/);
    expect(got.env.SERVEBENCH_FAKE_GPU_STATE).toBe('/tmp/gpu-state.json');
    expect(got.env.PATH).toBe('/bin');
  });

  it('without the simulator the usual lookup applies', () => {
    const env = { PATH: '/bin' };
    expect(gpuSource(undefined, undefined, env)).toEqual({ nvidiaSmiPath: undefined, env });
  });
});
