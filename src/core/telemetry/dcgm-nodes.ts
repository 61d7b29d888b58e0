import type { GpuSample } from '../../shared/telemetry.js';

/** The node a DCGM exporter URL stands for: its host and port. */
function dcgmNode(url: string): string {
  return URL.parse(url)?.host ?? url;
}

/**
 * Tags each sample of several DCGM exporters with its node and gives every (node, GPU) pair its own run-wide GPU
 * number, in the order they are first read, so two nodes' GPU 0 stay two GPUs in every summary. One exporter's
 * samples pass unchanged.
 */
export function nodeTagger(urls: readonly string[]): (url: string, sample: GpuSample) => GpuSample {
  if (urls.length <= 1) return (_url, sample) => sample;
  const numbers = new Map<string, number>();
  return (url, sample) => {
    const node = dcgmNode(url);
    const key = `${node}\u0000${sample.gpu}`;
    let gpu = numbers.get(key);
    if (gpu === undefined) {
      gpu = numbers.size;
      numbers.set(key, gpu);
    }
    return { ...sample, gpu, node, nodeGpu: sample.gpu };
  };
}
