import type { RequestRecord } from '../../shared/request-record.js';
import { isMeasured } from '../metrics/request-metrics.js';
import { clientDecodeMs } from '../metrics/stream-timing.js';
import { impossibleUsage } from '../metrics/usage-checks.js';
import { median, okMeasured } from './helpers.js';
import { defineCheck } from './define.js';
import { judged, type Facts, type Judged } from './verdict.js';

/**
 * The most common token count among a request's chunks that carry tokens (ties go to the larger size, so a short
 * last block does not become the mode); null when no chunk carries a token.
 */
function modalChunkTokens(record: RequestRecord): number | null {
  const counts = new Map<number, number>();
  for (const [, tokens] of record.chunks) if (tokens > 0) counts.set(tokens, (counts.get(tokens) ?? 0) + 1);
  let mode: number | null = null;
  let best = 0;
  for (const [tokens, n] of counts) {
    if (n > best || (n === best && mode !== null && tokens > mode)) {
      mode = tokens;
      best = n;
    }
  }
  return mode;
}

/**
 * True when a request's per-chunk token counts (server continuous usage) are irregular: some chunk carries more
 * tokens than the request's most common chunk size, the sign of a lost event whose tokens the next chunk absorbed.
 * A diffusion stream (every chunk one block) stays regular; a last chunk smaller than the mode is fine.
 */
function hasIrregularChunks(record: RequestRecord): boolean {
  if (record.chunkTokensSource !== 'server') return false;
  const mode = modalChunkTokens(record);
  return mode !== null && record.chunks.some(([, tokens]) => tokens > mode);
}

/** Client vs server timing: a decode span differing by more than this share and SLACK_MS disagrees. */
export const SERVER_TIMING_LIMITS = { decodeShare: 0.25, slackMs: 50 } as const;

/**
 * The client's times against the server's own (llama.cpp `timings`), for the ok requests that carry them, as facts
 * (none without them). The decode span (first to last token chunk) should match predicted_ms: more than a tenth of the
 * requests off by the limits is a problem (decodeProblem). TTFT includes queueing and transport, so it may exceed
 * prompt_ms by any amount but never fall short of it (firstTokenTooSoon).
 */
function serverTimingFacts(ok: readonly RequestRecord[]): Facts {
  const timed = ok.filter(
    (r) =>
      r.serverPromptMs !== undefined &&
      r.serverDecodeMs !== undefined &&
      r.firstTokenMs !== null &&
      r.chunks.length > 0,
  );
  if (timed.length === 0) return {};
  const { decodeShare, slackMs } = SERVER_TIMING_LIMITS;
  const clientDecode = (r: RequestRecord): number => clientDecodeMs(r) as number;
  const serverDecode = (r: RequestRecord): number => r.serverDecodeMs as number;
  const decodeOff = timed.filter(
    (r) => Math.abs(clientDecode(r) - serverDecode(r)) > Math.max(decodeShare * serverDecode(r), slackMs),
  );
  const tooSoon = timed.filter((r) => (r.firstTokenMs as number) - r.sendMs + slackMs < (r.serverPromptMs as number));
  return {
    serverTimedRequests: timed.length,
    decodeDisagrees: decodeOff.length,
    decodeProblem: decodeOff.length > timed.length / 10,
    decodeOffClientMedianMs: decodeOff.length > 0 ? median(decodeOff.map(clientDecode)) : null,
    decodeOffServerMedianMs: decodeOff.length > 0 ? median(decodeOff.map(serverDecode)) : null,
    firstTokenTooSoon: tooSoon.length,
    clientDecodeMedianMs: median(timed.map(clientDecode)),
    serverDecodeMedianMs: median(timed.map(serverDecode)),
    ttftMedianMs: median(timed.map((r) => (r.firstTokenMs as number) - r.sendMs)),
    serverPromptMedianMs: median(timed.map((r) => r.serverPromptMs as number)),
  };
}

/** Lost or malformed stream events, which a matching sum hides: invalid SSE lines, chunks larger than usual. */
function streamEventFacts(measured: readonly RequestRecord[], ok: readonly RequestRecord[]): Facts {
  const irregular = ok.filter(hasIrregularChunks);
  const sample = irregular[0];
  return {
    malformedLines: measured.reduce((a, r) => a + r.malformedLines, 0),
    irregularChunkRequests: irregular.length,
    serverChunkRequests: ok.filter((r) => r.chunkTokensSource === 'server').length,
    irregularExampleTokens: sample ? sample.chunks.reduce((a, c) => Math.max(a, c[1]), 0) : null,
    irregularExampleUsual: sample ? modalChunkTokens(sample) : null,
  };
}

/** Whether the stream itself had problems (the prose renderer names each). */
function streamProblems(f: Facts): boolean {
  return (
    (f.malformedLines as number) > 0 ||
    (f.irregularChunkRequests as number) > 0 ||
    f.decodeProblem === true ||
    ((f.firstTokenTooSoon as number | undefined) ?? 0) > 0
  );
}

/**
 * token-agreement: the client's count (sum of per-chunk usage, or chunks where the server gives no per-chunk usage)
 * against the server's completion_tokens; warns when they differ, because chunks are not tokens. Also warns on lost
 * or malformed stream events, which a matching sum hides: SSE lines that were not valid JSON (malformedLines of the
 * measured requests), and, where chunk token counts come from the server, chunks carrying more tokens than the
 * request's usual chunk size. Where the server times each request itself (llama.cpp), its decode time and prompt
 * time are compared to the client's (serverTimingFacts).
 */
export function tokenAgreementCheck(records: readonly RequestRecord[]): Judged {
  const measured = records.filter(isMeasured);
  const ok = okMeasured(records);
  const impossible = impossibleUsage(ok, 'completion_tokens') ?? impossibleUsage(ok, 'reasoning_tokens');
  if (impossible) {
    const fail = impossible.facts.field === 'completion_tokens';
    return judged('token-agreement', fail ? 'fail' : 'warn', impossible.code, impossible.facts);
  }
  const comparable = ok.filter((r) => r.nOutSource === 'server');
  const facts: Facts = {
    requests: ok.length,
    serverCounted: comparable.length,
    perChunkUsage: comparable.length > 0 && comparable.every((r) => r.chunkTokensSource === 'server'),
    ...streamEventFacts(measured, ok),
    ...serverTimingFacts(ok),
  };
  if (comparable.length === 0) {
    return judged('token-agreement', 'warn', ok.length === 0 ? 'no-completed-requests' : 'no-server-usage', facts);
  }
  const clientCount = (r: RequestRecord): number =>
    r.chunkTokensSource === 'server' ? r.chunks.reduce((a, c) => a + c[1], 0) : r.clientChunkCount;
  const differ = comparable.filter((r) => clientCount(r) !== r.nOut);
  if (differ.length === 0) {
    return streamProblems(facts)
      ? judged('token-agreement', 'warn', 'stream-problems', facts)
      : judged('token-agreement', 'pass', 'agree', facts);
  }
  const ratio = median(differ.filter((r) => r.nOut > 0).map((r) => clientCount(r) / r.nOut));
  const sample = differ[0]!;
  return judged('token-agreement', 'warn', 'counts-differ', {
    ...facts,
    differRequests: differ.length,
    medianRatio: Number.isNaN(ratio) ? null : ratio,
    exampleClientCount: clientCount(sample),
    exampleServerCount: sample.nOut,
    estimatedPerChunk: differ.some((r) => r.chunkTokensSource === 'estimated'),
  });
}

export const tokenAgreement = defineCheck('token-agreement', {
  limits: { serverDecodeShare: SERVER_TIMING_LIMITS.decodeShare, serverTimingSlackMs: SERVER_TIMING_LIMITS.slackMs },
  evaluate: (e) => tokenAgreementCheck(e.streams),
});
