import type { RequestRecord } from '../../shared/request-record.js';
import { fmtNum } from '../metrics/format.js';
import { isMeasured } from '../metrics/request-metrics.js';
import { clientDecodeMs } from '../metrics/stream-timing.js';
import { impossibleUsage } from '../metrics/usage-checks.js';
import { median, okMeasured } from './helpers.js';
import { defineCheck } from './define.js';
import { verdict, type Facts, type Judged } from './verdict.js';

/**
 * The most common token count among a request's chunks that carry tokens (ties go to the larger size, so a short
 * last block does not become the mode); null when no chunk carries a token.
 */
export function modalChunkTokens(record: RequestRecord): number | null {
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
export function hasIrregularChunks(record: RequestRecord): boolean {
  if (record.chunkTokensSource !== 'server') return false;
  const mode = modalChunkTokens(record);
  return mode !== null && record.chunks.some(([, tokens]) => tokens > mode);
}

/** Client vs server timing: a decode span differing by more than this share and SLACK_MS disagrees. */
export const SERVER_TIMING_LIMITS = { decodeShare: 0.25, slackMs: 50 } as const;

/** What serverTimingProblems found: its sentences, a note of the figures, and the counts behind them. */
export interface ServerTimingProblems {
  problems: string[];
  note?: string;
  facts: Facts;
}

/**
 * The client's times against the server's own (llama.cpp `timings`), for the ok requests that carry them. The
 * decode span (first to last token chunk) should match predicted_ms; TTFT includes queueing and transport, so it
 * may exceed prompt_ms by any amount but never fall short of it.
 */
export function serverTimingProblems(ok: readonly RequestRecord[]): ServerTimingProblems {
  const timed = ok.filter(
    (r) =>
      r.serverPromptMs !== undefined &&
      r.serverDecodeMs !== undefined &&
      r.firstTokenMs !== null &&
      r.chunks.length > 0,
  );
  if (timed.length === 0) return { problems: [], facts: {} };
  const { decodeShare, slackMs } = SERVER_TIMING_LIMITS;
  const clientDecode = (r: RequestRecord): number => clientDecodeMs(r) as number;
  const decodeDiffers = (r: RequestRecord): boolean => {
    const server = r.serverDecodeMs as number;
    return Math.abs(clientDecode(r) - server) > Math.max(decodeShare * server, slackMs);
  };
  const tooSoon = timed.filter((r) => (r.firstTokenMs as number) - r.sendMs + slackMs < (r.serverPromptMs as number));
  const decodeOff = timed.filter(decodeDiffers);
  const problems: string[] = [];
  const med = (values: number[]): string => `${fmtNum(median(values))} ms`;
  if (decodeOff.length > timed.length / 10) {
    problems.push(
      `${decodeOff.length}/${timed.length} requests: the client's decode time (first to last token, median ` +
        `${med(decodeOff.map(clientDecode))}) disagrees with the server's own predicted_ms (median ` +
        `${med(decodeOff.map((r) => r.serverDecodeMs as number))}): a busy client or a proxy that buffers the stream ` +
        "shifts the token times, so ITL and TPOT are not the server's",
    );
  }
  if (tooSoon.length > 0) {
    problems.push(
      `${tooSoon.length}/${timed.length} requests saw their first token sooner than the server's own prompt_ms ` +
        '(impossible): the server timings or the client clock are wrong',
    );
  }
  const note =
    `server timings: decode median ${med(timed.map(clientDecode))} (client) vs ` +
    `${med(timed.map((r) => r.serverDecodeMs as number))} (server), TTFT median ` +
    `${med(timed.map((r) => (r.firstTokenMs as number) - r.sendMs))} vs prompt ${med(timed.map((r) => r.serverPromptMs as number))}`;
  return {
    problems,
    note,
    facts: { serverTimedRequests: timed.length, decodeDisagrees: decodeOff.length, firstTokenTooSoon: tooSoon.length },
  };
}

/**
 * token-agreement: the client's count (sum of per-chunk usage, or chunks where the server gives no per-chunk usage)
 * against the server's completion_tokens; warns when they differ, because chunks are not tokens. Also warns on lost
 * or malformed stream events, which a matching sum hides: SSE lines that were not valid JSON (malformedLines of the
 * measured requests), and, where chunk token counts come from the server, chunks carrying more tokens than the
 * request's usual chunk size. Where the server times each request itself (llama.cpp), its decode time and prompt
 * time are compared to the client's (serverTimingProblems).
 */
export function tokenAgreementCheck(records: readonly RequestRecord[]): Judged {
  const measured = records.filter(isMeasured);
  const ok = okMeasured(records);
  const impossible =
    impossibleUsage(ok, 'completion_tokens', 'TPOT, ITL per token, tok/s, cost and goodput on TPOT are left out') ??
    impossibleUsage(ok, 'reasoning_tokens', 'the reasoning/answer split counts chunks instead');
  if (impossible) {
    const fail = impossible.facts.field === 'completion_tokens';
    return verdict('token-agreement', fail ? 'fail' : 'warn', impossible.code, impossible.facts, impossible.detail);
  }
  const malformed = measured.reduce((a, r) => a + r.malformedLines, 0);
  const irregular = ok.filter(hasIrregularChunks);
  const problems: string[] = [];
  if (malformed > 0) {
    problems.push(
      `${malformed} SSE ${malformed === 1 ? 'line was' : 'lines were'} not valid JSON; tokens they carried were absorbed by the next chunk`,
    );
  }
  if (irregular.length > 0) {
    const sample = irregular[0]!;
    const mode = modalChunkTokens(sample)!;
    const biggest = sample.chunks.reduce((a, c) => Math.max(a, c[1]), 0);
    const perServerChunk = ok.filter((r) => r.chunkTokensSource === 'server').length;
    problems.push(
      `${irregular.length}/${perServerChunk} requests had a chunk carrying more tokens than their usual chunk ` +
        `(e.g. ${fmtNum(biggest)} vs ${fmtNum(mode)}): a sign of lost stream events (or a server that sends ` +
        'variable-size chunks, e.g. speculative decoding), so ITL is not per token for those chunks',
    );
  }
  const timing = serverTimingProblems(ok);
  problems.push(...timing.problems);
  const streamText = problems.length > 0 ? `; ${problems.join('; ')}` : '';
  const comparable = ok.filter((r) => r.nOutSource === 'server');
  const facts: Facts = {
    requests: ok.length,
    serverCounted: comparable.length,
    malformedLines: malformed,
    irregularChunkRequests: irregular.length,
    ...timing.facts,
  };
  if (comparable.length === 0) {
    return verdict(
      'token-agreement',
      'warn',
      ok.length === 0 ? 'no-completed-requests' : 'no-server-usage',
      facts,
      (ok.length === 0
        ? 'no completed requests to compare'
        : 'the server reported no token usage: the client chunk count cannot be checked against a server count') +
        streamText,
    );
  }
  const clientCount = (r: RequestRecord): number =>
    r.chunkTokensSource === 'server' ? r.chunks.reduce((a, c) => a + c[1], 0) : r.clientChunkCount;
  const differ = comparable.filter((r) => clientCount(r) !== r.nOut);
  const perChunk = comparable.every((r) => r.chunkTokensSource === 'server');
  if (differ.length === 0) {
    const agree =
      `client and server agree on output tokens for all ${comparable.length} requests (${perChunk ? 'per-chunk usage' : 'one token per chunk'})` +
      (timing.note ? `; ${timing.note}` : '');
    if (problems.length === 0) return verdict('token-agreement', 'pass', 'agree', facts, agree);
    return verdict('token-agreement', 'warn', 'stream-problems', facts, `${problems.join('; ')} (${agree})`);
  }
  const ratio = median(differ.filter((r) => r.nOut > 0).map((r) => clientCount(r) / r.nOut));
  const sample = differ[0]!;
  const estimatedPerChunk = differ.some((r) => r.chunkTokensSource === 'estimated');
  return verdict(
    'token-agreement',
    'warn',
    'counts-differ',
    { ...facts, differRequests: differ.length, medianRatio: Number.isNaN(ratio) ? null : ratio },
    `${differ.length}/${comparable.length} requests: client counted ${fmtNum(clientCount(sample))} vs server ${fmtNum(sample.nOut)} tokens ` +
      `(median ratio ${Number.isNaN(ratio) ? 'n/a' : fmtNum(ratio)}); chunks are not tokens, so token figures use the server's count` +
      (estimatedPerChunk ? ' and ITL per token assumes one token per chunk' : '') +
      streamText,
  );
}

export const tokenAgreement = defineCheck('token-agreement', {
  limits: { serverDecodeShare: SERVER_TIMING_LIMITS.decodeShare, serverTimingSlackMs: SERVER_TIMING_LIMITS.slackMs },
  evaluate: (e) => tokenAgreementCheck(e.measured),
});
