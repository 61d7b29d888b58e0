import { fmtNumber, fmtShare } from '../../shared/format.js';
import type { CheckFact } from '../../shared/run-record.js';
import type { Sentences } from './prose.js';
import type { Facts } from './verdict.js';

// The streaming check's sentences (judgeStreaming in src/core/metrics/streaming-check.ts), from its codes and facts.

const num = (f: Facts, key: string): number => f[key] as number;
const str = (f: Facts, key: string): string => String(f[key] ?? '');

/** A rate as the check says it: tokens per second, or "at one instant" (the fact is null for an infinite one). */
const rate = (x: CheckFact | undefined): string =>
  typeof x === 'number' && Number.isFinite(x) ? `${fmtNumber(x)} tok/s` : 'at one instant';

/** How the requests of the commonest held shape came (`heldShape`; the fail codes are the shape itself). */
function heldText(shape: string, f: Facts): string {
  const of = `${num(f, 'shapeRequests')}/${num(f, 'requests')}`;
  if (shape === 'buffered-whole')
    return (
      `${of} multi-token requests came whole: a median ${fmtNumber(num(f, 'heldTokensMedian'))} tokens arrived with ` +
      `the first within ${fmtNumber(num(f, 'burstSpanMsMedian'))} ms (${rate(f.burstTokPerSMedian)}; no decoder ` +
      `streams faster than ${fmtNumber(num(f, 'maxStreamTokPerS'))} tok/s): the server or a proxy held the response ` +
      'and sent it at once, so TTFT is E2E and ITL is not measured'
    );
  if (shape === 'buffered-after-first')
    return (
      `${of} multi-token requests passed their first token, then held the rest: ` +
      `${fmtShare(num(f, 'heldShareMedian'), 1)} of the output (median) came in one burst after a ` +
      `${fmtNumber(num(f, 'holdMsMedian'))} ms hold: a proxy buffers the stream after its first bytes, so TTFT looks ` +
      "right but ITL and TPOT are the proxy's"
    );
  return (
    `${of} multi-token requests were chunky: ${fmtShare(num(f, 'heldShareMedian'), 1)} of the output (median) came ` +
    `in ${fmtNumber(num(f, 'burstsMedian'))} bursts, each held up to ${fmtNumber(num(f, 'holdMsMedian'))} ms (over ` +
    `${num(f, 'chunkyMinHoldMs')} ms): a proxy flushes the stream in batches, so ITL and TPOT are the proxy's`
  );
}

const singleText = (f: Facts): string =>
  num(f, 'singleChunkRequests') > 0 ? `; ${num(f, 'singleChunkRequests')} more came in a single chunk` : '';

/** The server's own decode time beside the client's span, when it proves the buffering. */
const serverText = (f: Facts): string =>
  f.serverTimedRequests === undefined || num(f, 'serverDecodeShortRequests') * 2 <= num(f, 'serverTimedRequests')
    ? ''
    : `; the server says it spent ${fmtNumber(num(f, 'serverDecodeMs'))} ms decoding (median, ` +
      `${str(f, 'serverDecodeSource')}), the tokens reached this client over ${fmtNumber(num(f, 'clientDecodeMs'))} ms`;

const held = (shape: string) => (f: Facts) => `${heldText(shape, f)}${singleText(f)}${serverText(f)}`;

const shapeText = (f: Facts): string =>
  `median ${fmtNumber(num(f, 'chunksMedian'))} chunks per request, the tokens after the first over ` +
  `${fmtNumber(num(f, 'spanMsMedian'))} ms (${rate(f.restTokPerSMedian)})`;

function streamedText(f: Facts): string {
  const streamed = num(f, 'streamedRequests');
  const heldCount = num(f, 'bufferedWholeRequests') + num(f, 'bufferedAfterFirstRequests') + num(f, 'chunkyRequests');
  return heldCount > 0
    ? `tokens arrived over time in ${streamed} of ${streamed + heldCount} multi-token requests (${shapeText(f)}); ` +
        `${heldCount} more came in a burst, too few to be a proxy's (a moment this client or the server stalled)`
    : `tokens arrived over time in all ${streamed} multi-token requests (${shapeText(f)})`;
}

function stallCause(f: Facts): string {
  if (f.hostBusy === true)
    return `the host was busy (${str(f, 'hostPressure')}): this client, and a server on this machine, got the CPU late`;
  const lag = f.clientLoopLagP99Ms;
  return typeof lag === 'number' && lag > num(f, 'loopLagLimitMs')
    ? `the server, the network or this client stalled (its event loop lagged ${fmtNumber(lag)} ms at p99)`
    : 'the server stalled (a long prefill of other requests, a preemption) or the network did';
}

function coalescedText(f: Facts): string {
  const perToken =
    f.serverItlP50Ms !== null && f.serverItlP50Ms !== undefined
      ? `the server's own time per token (its timings) p50 ${fmtNumber(num(f, 'serverItlP50Ms'))} ms`
      : f.tpotP50Ms !== null && f.tpotP50Ms !== undefined
        ? `TPOT p50 ${fmtNumber(num(f, 'tpotP50Ms'))} ms is the time per token`
        : 'the time per token is unknown';
  const itl = typeof f.itlP50Ms === 'number' ? fmtNumber(f.itlP50Ms) : '—';
  return (
    `ITL is dominated by events that arrived together: ${fmtShare(num(f, 'coalescedShare'), 1)} of the chunk gaps ` +
    `came in the same read as the chunk before (ITL p50 ${itl} ms is this client's parse time, not a decode step); ` +
    perToken
  );
}

/** The streaming check's sentence per code. */
export const STREAMING: Sentences = {
  'no-requests': () => 'no completed multi-token requests: streaming could not be verified',
  'buffered-whole': held('buffered-whole'),
  'buffered-after-first': held('buffered-after-first'),
  chunky: held('chunky'),
  'client-lag': (f) =>
    `cannot tell whether the server streams: ${heldText('buffered-whole', f)}${singleText(f)}, but the client's ` +
    `event loop lagged ${fmtNumber(num(f, 'clientLoopLagP99Ms'))} ms (p99), long enough to merge a fast stream into ` +
    'one read; rerun with fewer concurrent requests or --client-workers, on a machine with idle cores',
  'server-decode-mismatch': (f) =>
    `${num(f, 'serverDecodeShortRequests')}/${num(f, 'serverTimedRequests')} multi-token requests reached this ` +
    `client over a median ${fmtNumber(num(f, 'clientDecodeMs'))} ms, but the server says it spent ` +
    `${fmtNumber(num(f, 'serverDecodeMs'))} ms decoding them (${str(f, 'serverDecodeSource')}): tokens cannot ` +
    'arrive faster than they are made, so something between its decoder and this client held them; ' +
    "ITL and TPOT are not the server's",
  'single-chunk': (f) => {
    const single = num(f, 'singleChunkRequests');
    const requests = num(f, 'requests');
    const which =
      single === requests ? 'the whole output' : `for ${single}/${requests} multi-token requests the whole output`;
    return (
      `cannot judge streaming: ${which} came in one chunk (a block-diffusion model whose block covers the output, ` +
      `or a server that does not stream), so TTFT is E2E and ITL is not measured for ${single === 1 ? 'it' : 'them'}` +
      (single < requests ? `; the other ${requests - single} streamed` : '')
    );
  },
  'partly-buffered': (f) => {
    const single = num(f, 'singleChunkRequests');
    const rest = `${num(f, 'streamedRequests')} streamed${single > 0 ? `, ${single} came in a single chunk` : ''}`;
    return `${heldText(str(f, 'heldShape'), f)}; of the others ${rest}`;
  },
  clumped: (f) =>
    `tokens arrived over time but in clumps of ${fmtNumber(num(f, 'chunksPerArrivalMedian'))} chunks at once ` +
    `(${shapeText(f)}): a proxy that buffers part of the stream, or a client far behind the server; TTFT and ITL ` +
    'are coarse',
  stalled: (f) =>
    `${num(f, 'stalledRequests')}/${num(f, 'streamedRequests')} requests paused mid-stream for up to ` +
    `${fmtNumber(num(f, 'maxGapMs'))} ms (median chunk gap ${fmtNumber(num(f, 'medianGapMs'))} ms): ` +
    `${stallCause(f)}; it inflates E2E and TPOT`,
  streamed: streamedText,
  'itl-coalesced': (f) => `${streamedText(f)}; ${coalescedText(f)}`,
};
