import { describe, expect, it } from 'vitest';
import { clientCheck } from '../../../src/core/checks/client.js';
import { ttftSplit } from '../../../src/core/metrics/ttft-split.js';
import type { LevelTelemetry } from '../../../src/shared/run-record.js';
import { ttftSplitText } from '../../../src/shared/ttft-split-text.js';
import { makeRecord } from './make-record.js';

function req(id: number, ttft: number, over: Parameters<typeof makeRecord>[0] = {}) {
  const sendMs = id * 1000;
  return makeRecord({ id, sendMs, firstTokenMs: sendMs + ttft, endMs: sendMs + ttft + 100, nOut: 11, ...over });
}

const engine = (parts: Partial<NonNullable<LevelTelemetry['engineTtftParts']>>, extra: Partial<LevelTelemetry> = {}) =>
  ({
    engineTtftParts: {
      fromMs: 0,
      toMs: 1e9,
      requests: 3,
      queueMeanMs: 600,
      prefillMeanMs: 150,
      ttftMeanMs: 760,
      ...parts,
    },
    ...extra,
  }) as LevelTelemetry;

describe('where TTFT goes', () => {
  it("splits the mean TTFT of the requests the engine's histograms counted into queue, prefill, server other and the rest", () => {
    const ok = [req(1, 800), req(2, 812), req(3, 824)];
    const split = ttftSplit(ok, engine({}, { engineDecodeMeanMs: 500 }))!;
    expect(split.basis).toBe('mean');
    expect(split.ttftMs).toBe(812);
    expect(split.parts.map((p) => [p.part, p.ms, p.source])).toEqual([
      ['queue', 600, 'engine-metrics'],
      ['prefill', 150, 'engine-metrics'],
      ['server-other', 10, 'engine-metrics'],
      ['rest', 52, 'rest'],
    ]);
    expect(split.unknown).toEqual([]);
    expect(split.decode).toEqual({ msPerToken: 50, source: 'engine-metrics' });
    expect(ttftSplitText(split)).toBe(
      'of TTFT mean 812 ms: queue 600 (engine /metrics), prefill 150 (engine /metrics), server other 10.0 (engine /metrics), network and client 52.0 (TTFT less the known parts); decode 50.0 ms/token (engine /metrics)',
    );
  });

  it('compares only the requests that ended between the two scrapes', () => {
    const ok = [req(1, 800), req(2, 900), req(3, 10_000)];
    const split = ttftSplit(ok, engine({ fromMs: 2000, toMs: 3000 }))!;
    expect(split.requests).toBe(1);
    expect(split.ttftMs).toBe(900);
  });

  it("takes SGLang's prefill as its TTFT less its queue, and names it so", () => {
    const split = ttftSplit([req(1, 800)], engine({ prefillMeanMs: null }))!;
    expect(split.parts.find((p) => p.part === 'prefill')).toEqual({
      part: 'prefill',
      ms: 160,
      source: 'engine-ttft-less-queue',
    });
  });

  it("uses llama.cpp's per-request prompt time around p50, the queue named unknown and kept in the rest", () => {
    const ok = [100, 200, 300, 400, 500].map((t, i) => req(i, t, { serverPromptMs: t / 2, serverDecodeMs: 300 }));
    const split = ttftSplit(ok, undefined)!;
    expect(split.basis).toBe('p50');
    expect(split.ttftMs).toBe(300);
    expect(split.requests).toBe(1);
    expect(split.unknown).toEqual(['queue']);
    expect(split.parts.find((p) => p.part === 'prefill')?.ms).toBe(150);
    expect(split.parts.find((p) => p.part === 'rest')?.ms).toBe(150);
    expect(split.decode).toEqual({ msPerToken: 30, source: 'server-timings' });
    expect(ttftSplitText(split)).toContain('queue, network and client 150');
  });

  it("counts a new connection's span from the client's stamps as a part of its own", () => {
    const r = req(1, 800, {
      http: { connectStartMs: 1001, connectEndMs: 1041, requestSentMs: 1042, headersMs: 1700, firstByteMs: 1700 },
    });
    const reused = req(2, 800, { http: { requestSentMs: 2001, headersMs: 2700, firstByteMs: 2700 } });
    const split = ttftSplit([r, reused], undefined)!;
    expect(split.unknown).toEqual(['queue', 'prefill']);
    expect(split.parts.find((p) => p.part === 'connect')).toEqual({ part: 'connect', ms: 20, source: 'client' });
    expect(split.parts.find((p) => p.part === 'rest')?.ms).toBe(780);
  });

  it("puts the client's share in the client check's facts, large only when the server's parts are known", () => {
    const large = ttftSplit([req(1, 100)], engine({ queueMeanMs: 10, prefillMeanMs: 20, ttftMeanMs: 30 }));
    const facts = clientCheck({ loopLagP99Ms: 1, scheduleLagP99Ms: null, ttftSplit: large }).facts;
    expect(facts).toMatchObject({
      ttftRestMs: 70,
      ttftRestShare: 0.7,
      ttftRestLarge: true,
      ttftRestUnknownParts: null,
    });
    const unknown = ttftSplit([req(1, 100)], undefined);
    const facts2 = clientCheck({ loopLagP99Ms: 1, scheduleLagP99Ms: null, ttftSplit: unknown }).facts;
    expect(facts2).toMatchObject({ ttftRestShare: 1, ttftRestLarge: false, ttftRestUnknownParts: 'queue,prefill' });
  });
});
