import { afterAll, describe, expect, it } from 'vitest';
import { parseFault } from '../../../src/core/sim/index.js';
import { getHistogram, parsePrometheusText } from '../../../src/core/telemetry/prometheus-parser.js';
import { closeAll, postJson, startSim, stepUntil, testProfile } from './helpers.js';
import { VirtualClock } from './virtual-clock.js';

afterAll(closeAll);

const STREAM = { prompt: 'x', max_tokens: 10, ignore_eos: true, stream: true, stream_options: { include_usage: true } };

/** One 10-token completion on a virtual clock, then the vLLM decode-time histogram of /metrics. */
async function decodeHistogram(faults: string[]): Promise<{ sum: number; count: number }> {
  const clock = new VirtualClock();
  const s = await startSim({ profile: testProfile(), faults: faults.map(parseFault), clock });
  const text = postJson(`${s.url}/v1/completions`, STREAM).then((r) => r.text());
  await stepUntil(
    clock,
    s,
    (c) => c.finished === 1,
    (c) => c.running + c.waiting === 1 - c.finished,
  );
  await text;
  const page = await (await fetch(`${s.url}/metrics`)).text();
  const h = getHistogram(parsePrometheusText(page), 'vllm:request_decode_time_seconds');
  expect(h).not.toBeNull();
  return { sum: h!.sum ?? NaN, count: h!.count ?? NaN };
}

describe('sim /metrics: vLLM request_decode_time_seconds', () => {
  // One 5.5 ms step per token (5 ms + 0.5 ms per sequence): first to tenth token is 9 steps.
  it('is the first to the last generated token of each finished request', async () => {
    const h = await decodeHistogram([]);
    expect(h.count).toBe(1);
    expect(h.sum).toBeCloseTo(9 * 0.0055, 9);
  });

  it('is the engine time even when the stream is written at once (the buffered fault): what exposes a buffer', async () => {
    const h = await decodeHistogram(['buffered']);
    expect(h.count).toBe(1);
    expect(h.sum).toBeCloseTo(9 * 0.0055, 9);
  });
});
