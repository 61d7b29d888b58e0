import { describe, expect, it } from 'vitest';
import { formatGpuSnapshot } from '../../../src/cli/gpu-command.js';
import { readGpuSnapshot } from '../../../src/core/telemetry/gpu-snapshot.js';
import type { HttpGetText } from '../../../src/core/telemetry/http-get.js';

const page = (gpus: number[], model: string): string =>
  gpus
    .map((g) => `DCGM_FI_DEV_SM_CLOCK{gpu="${g}",modelName="${model}"} 1980\nDCGM_FI_DEV_GPU_TEMP{gpu="${g}"} 55`)
    .join('\n');

const pages: Record<string, string> = {
  'http://a:9400/metrics': page([0, 1], 'NVIDIA H200'),
  'http://b:9400/metrics': page([0], 'NVIDIA H100 80GB HBM3'),
};
const fetch: HttpGetText = (url) =>
  url in pages ? Promise.resolve({ status: 200, body: pages[url]! }) : Promise.reject(new Error('ECONNREFUSED'));

describe('servebench gpu with several DCGM exporters', () => {
  it('numbers every GPU across the nodes, names its node, and lists the exporter it could not read', async () => {
    const result = await readGpuSnapshot({
      dcgmUrl: 'http://a:9400/metrics,http://b:9400/metrics,http://c:9400/metrics',
      fetch,
    });
    if (!result.ok) throw new Error(result.reason);
    const { gpus, samples, unread } = result.snapshot;
    expect(gpus.map((g) => [g.index, g.node, g.name])).toEqual([
      [0, 'a:9400', 'NVIDIA H200'],
      [1, 'a:9400', 'NVIDIA H200'],
      [2, 'b:9400', 'NVIDIA H100 80GB HBM3'],
    ]);
    expect(samples.map((s) => [s.gpu, s.node, s.nodeGpu])).toEqual([
      [0, 'a:9400', 0],
      [1, 'a:9400', 1],
      [2, 'b:9400', 0],
    ]);
    expect(unread).toHaveLength(1);
    expect(unread![0]).toContain('http://c:9400/metrics');
    expect(formatGpuSnapshot(result.snapshot)).toContain('GPU 2 (on b:9400)');
  });

  it('fails in one line naming every exporter when none answers', async () => {
    const result = await readGpuSnapshot({ dcgmUrl: 'http://c:9400/metrics,http://d:9400/metrics', fetch });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toContain('http://c:9400/metrics');
    expect(result.reason).toContain('http://d:9400/metrics');
    expect(result.reason).toContain('--dcgm-url');
  });

  it('keeps one exporter unnumbered by node, as before', async () => {
    const result = await readGpuSnapshot({ dcgmUrl: 'http://a:9400/metrics', fetch });
    if (!result.ok) throw new Error(result.reason);
    expect(result.snapshot.gpus.map((g) => g.node)).toEqual([undefined, undefined]);
    expect(result.snapshot.unread).toBeUndefined();
  });
});
