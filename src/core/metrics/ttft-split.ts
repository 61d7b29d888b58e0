import { requestHttpTimes, requestTtftMs } from '../../shared/request-record.js';
import type { RequestRecord } from '../../shared/request-record.js';
import type { LevelTelemetry, TtftPart, TtftSplit } from '../../shared/run-record.js';
import { percentile } from './percentiles.js';

// Where a level's TTFT goes. With the engine's histograms (vLLM, SGLang) the parts are means over the requests it
// finished between two scrapes, set beside the client's mean TTFT of the requests that ended in that span; with
// llama.cpp's per-request timings they are means over the requests around TTFT p50 (p40 to p60). The rest is what
// TTFT holds beyond the known parts: the network, the HTTP stack and the client, plus any part the server did not give.

/** The band of requests around p50 whose parts describe "TTFT p50". */
const P50_BAND: [number, number] = [0.4, 0.6];

function mean(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

// One pass, adding in record order as mean() would: a level's million phase objects are never held at once.
function connectPart(records: readonly RequestRecord[]): TtftPart | null {
  let sum = 0;
  let n = 0;
  for (const r of records) {
    const t = requestHttpTimes(r);
    if (t === null) continue;
    sum += t.connectMs;
    n++;
  }
  if (n === 0) return null;
  return { part: 'connect', ms: sum / n, source: 'client' };
}

/** Closes a split: the rest is TTFT less every known part; unknown parts are named as within it. */
function closeSplit(basis: TtftSplit['basis'], ttftMs: number, requests: number, parts: TtftPart[]): TtftSplit {
  const known = parts.reduce((a, p) => a + (p.ms ?? 0), 0);
  const rest = ttftMs - known;
  return {
    basis,
    ttftMs,
    requests,
    parts: [...parts, { part: 'rest', ms: rest, source: 'rest' }],
    unknown: parts.filter((p) => p.ms === null).map((p) => p.part),
    restShare: ttftMs > 0 ? rest / ttftMs : null,
  };
}

function fromEngineMetrics(ok: readonly RequestRecord[], telemetry: LevelTelemetry): TtftSplit | null {
  const e = telemetry.engineTtftParts;
  if (!e) return null;
  const inSpan = ok.filter((r) => r.endMs !== null && r.endMs > e.fromMs && r.endMs <= e.toMs);
  const ttfts = inSpan.map(requestTtftMs).filter((t) => t !== null);
  if (ttfts.length === 0) return null;
  const queue = e.queueMeanMs;
  // SGLang has no prefill histogram: its TTFT less its queue time is the prefill and the engine's own overhead.
  const prefill =
    e.prefillMeanMs ?? (e.ttftMeanMs !== null && queue !== null ? Math.max(0, e.ttftMeanMs - queue) : null);
  const parts: TtftPart[] = [
    { part: 'queue', ms: queue, source: 'engine-metrics' },
    { part: 'prefill', ms: prefill, source: e.prefillMeanMs !== null ? 'engine-metrics' : 'engine-ttft-less-queue' },
  ];
  if (e.ttftMeanMs !== null && queue !== null && prefill !== null) {
    parts.push({ part: 'server-other', ms: Math.max(0, e.ttftMeanMs - queue - prefill), source: 'engine-metrics' });
  }
  const connect = connectPart(inSpan);
  if (connect) parts.push(connect);
  return closeSplit('mean', mean(ttfts), ttfts.length, parts);
}

function fromServerTimings(ok: readonly RequestRecord[]): TtftSplit | null {
  const timed = ok.filter((r) => r.serverPromptMs !== undefined && requestTtftMs(r) !== null);
  if (timed.length === 0) return null;
  const sorted = timed.map((r) => requestTtftMs(r)!).sort((a, b) => a - b);
  const lo = percentile(sorted, P50_BAND[0] * 100);
  const hi = percentile(sorted, P50_BAND[1] * 100);
  const band = timed.filter((r) => requestTtftMs(r)! >= lo && requestTtftMs(r)! <= hi);
  const parts: TtftPart[] = [
    // llama.cpp's timings carry no queue time: the wait for a slot stays in the rest.
    { part: 'queue', ms: null, source: 'unknown' },
    { part: 'prefill', ms: mean(band.map((r) => r.serverPromptMs!)), source: 'server-timings' },
  ];
  const connect = connectPart(band);
  if (connect) parts.push(connect);
  return closeSplit('p50', percentile(sorted, 50), band.length, parts);
}

/** The client's own view alone: the connect it stamped, every server part unknown. */
function fromClient(ok: readonly RequestRecord[]): TtftSplit | null {
  const ttfts = ok.map(requestTtftMs).filter((t) => t !== null);
  if (ttfts.length === 0) return null;
  const sorted = [...ttfts].sort((a, b) => a - b);
  const parts: TtftPart[] = [
    { part: 'queue', ms: null, source: 'unknown' },
    { part: 'prefill', ms: null, source: 'unknown' },
  ];
  const connect = connectPart(ok);
  if (connect) parts.push(connect);
  return closeSplit('p50', percentile(sorted, 50), ttfts.length, parts);
}

/** The engine's decode time per token beside TPOT: its decode histogram or llama.cpp's timings, over output tokens. */
function decodePerToken(ok: readonly RequestRecord[], telemetry: LevelTelemetry | undefined): TtftSplit['decode'] {
  const perRequest = ok.filter((r) => r.serverDecodeMs !== undefined && r.nOut > 1);
  if (perRequest.length > 0) {
    const perToken = perRequest.map((r) => r.serverDecodeMs! / (r.nOut - 1)).sort((a, b) => a - b);
    return { msPerToken: percentile(perToken, 50), source: 'server-timings' };
  }
  const meanMs = telemetry?.engineDecodeMeanMs;
  const decoding = ok.filter((r) => r.nOut > 1);
  if (typeof meanMs !== 'number' || decoding.length === 0) return null;
  return { msPerToken: meanMs / mean(decoding.map((r) => r.nOut - 1)), source: 'engine-metrics' };
}

/**
 * Where a level's TTFT goes (queue, prefill, the engine's other time, connect and the rest), from the best source the
 * level has: the engine's histograms, llama.cpp's timings, or the client's stamps alone; null without a TTFT.
 */
export function ttftSplit(ok: readonly RequestRecord[], telemetry: LevelTelemetry | undefined): TtftSplit | null {
  const split =
    (telemetry ? fromEngineMetrics(ok, telemetry) : null) ?? fromServerTimings(ok) ?? fromClient(ok) ?? null;
  if (!split) return null;
  const decode = decodePerToken(ok, telemetry);
  return decode ? { ...split, decode } : split;
}
