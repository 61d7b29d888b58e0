import type { RequestRecord } from '../../shared/request-record.js';
import type {
  Check,
  CheckFact,
  CheckId,
  CheckStatus,
  HostPressure,
  OfferedLoad,
  ResponseCache,
  RoundResult,
  Summary,
} from '../../shared/run-record.js';
import { OFFERED_MIN_SHARE } from '../../shared/offered-load.js';
import { hostBusy, hostPressureText } from '../telemetry/host-pressure.js';
import { commonestError, serverSaid } from './error-summary.js';
import { fmtCounts, fmtNum, fmtPct, fmtRange } from './format.js';
import { DEFAULT_CONFIDENCE, minSamplesForCi, percentile } from './percentiles.js';
import { isCancelled, isMeasured } from './request-metrics.js';
import type { CoalescedItlFinding } from './coalesced-itl.js';
import { judgeOpenLoopSpread, type OpenLoopRound } from './open-loop-spread.js';
import { judgeStreaming } from './streaming-check.js';
import type { ServerDecodeFigure } from './streaming-check.js';
import { clientDecodeMs } from './stream-timing.js';
import { coefficientOfVariation } from './throughput.js';
import { impossibleUsage, type ImpossibleUsage } from './usage-checks.js';

export { STALL_FACTOR, STALL_MIN_MS, stalledRequests } from './streaming-check.js';
export type { ServerDecodeFigure } from './streaming-check.js';
export { MAX_STREAM_TOKENS_PER_S, streamTiming } from './stream-timing.js';

/** Round-spread limit: a CV above this means the environment is wrong (DESIGN.md, the article's 15 %). */
export const ROUND_CV_LIMIT = 0.15;
/** Failed-request share up to which the errors check only warns. */
export const ERROR_WARN_LIMIT = 0.01;
/** Client limits (ms): loop lag p99 and schedule lag p99 above these warn; either above the fail limit fails. */
export const CLIENT_LIMITS = { loopLagWarnMs: 20, scheduleLagWarnMs: 10, failMs: 100 } as const;

const SEVERITY: Record<CheckStatus, number> = { pass: 0, warn: 1, fail: 2 };

function check(
  id: CheckId,
  status: CheckStatus,
  detail: string,
  code?: string,
  facts?: Record<string, CheckFact>,
): Check {
  const c: Check = { id, status, detail };
  if (code !== undefined) c.code = code;
  if (facts !== undefined) c.facts = facts;
  return c;
}

function okMeasured(records: readonly RequestRecord[]): RequestRecord[] {
  return records.filter((r) => isMeasured(r) && r.ok);
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

function distinct(values: readonly number[]): number[] {
  return [...new Set(values)].sort((a, b) => a - b);
}

function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

/** output-length: every ok request produced exactly the requested tokens, by the server's count. */
export function outputLengthCheck(records: readonly RequestRecord[]): Check {
  const ok = okMeasured(records);
  if (ok.length === 0)
    return check('output-length', 'warn', 'no completed requests: output length could not be verified');
  const counted = ok.filter((r) => r.nOutSource === 'server');
  const wrong = counted.filter((r) => r.nOut !== r.expectedOut);
  const impossible = impossibleUsage(ok, 'completion_tokens', 'output length not verified for them');
  if (impossible && wrong.length === 0) {
    return check('output-length', 'warn', impossible.detail, impossible.code, impossible.facts);
  }
  if (wrong.length > 0) {
    const reasons = countBy(wrong, (r) => r.finishReason ?? 'none');
    return check(
      'output-length',
      'fail',
      `${wrong.length}/${ok.length} requests produced ${fmtRange(wrong.map((r) => r.nOut))} tokens instead of ` +
        `${distinct(wrong.map((r) => r.expectedOut)).join('/')} (server count; finish reason ${fmtCounts(reasons)}): ` +
        'latency and throughput are not for the requested length',
    );
  }
  const estimated = ok.length - counted.length;
  if (estimated > 0) {
    const off = ok.filter((r) => r.nOutSource === 'estimated' && r.nOut !== r.expectedOut).length;
    return check(
      'output-length',
      'warn',
      `${estimated}/${ok.length} requests came without usage from the server, so their output length could not be ` +
        `verified (chunk-count estimate${off > 0 ? `, which differs from the request for ${off}` : ''})`,
    );
  }
  return check(
    'output-length',
    'pass',
    `${ok.length}/${ok.length} requests produced exactly ${distinct(ok.map((r) => r.expectedOut)).join('/')} tokens (server count)`,
  );
}

/** The expected lengths as a list, or as a range when there are many (multi-turn histories). */
function fmtLengths(values: readonly number[]): string {
  const d = distinct(values);
  return d.length <= 4 ? d.join('/') : fmtRange(d);
}

/**
 * input-length: every ok request's prompt had the requested tokens, by the server's usage.prompt_tokens.
 * `calibration`: why prompt calibration could not make them exact, when it said so (named in the failure).
 */
export function inputLengthCheck(records: readonly RequestRecord[], calibration?: string): Check {
  const ok = okMeasured(records);
  if (ok.length === 0)
    return check('input-length', 'warn', 'no completed requests: input length could not be verified');
  const known = ok.filter((r) => r.nIn !== null && r.expectedInSource === undefined);
  const wrong = known.filter((r) => r.nIn !== r.expectedIn);
  const impossible = impossibleUsage(
    ok,
    'prompt_tokens',
    'input length not verified, and total tok/s is left out (it would rest on them)',
  );
  if (impossible) return check('input-length', 'fail', impossible.detail, impossible.code, impossible.facts);
  if (wrong.length > 0) {
    const facts = { wrongRequests: wrong.length, requests: ok.length, calibration: calibration ?? null };
    return check(
      'input-length',
      'fail',
      `${wrong.length}/${ok.length} prompts had ${fmtRange(wrong.map((r) => r.nIn ?? 0))} tokens instead of ` +
        `${fmtLengths(wrong.map((r) => r.expectedIn))} (server count)${calibration ? `: ${calibration}` : ''}`,
      calibration ? 'calibration-inexact' : 'prompt-length-off',
      facts,
    );
  }
  // Multi-turn without a tokenizer (or its count failed): a later turn's history was not counted, nothing to verify.
  const uncountedRecords = ok.filter((r) => r.expectedInSource !== undefined);
  const uncounted = uncountedRecords.length;
  if (uncounted > 0) {
    const multiTurn = uncountedRecords.every((r) => r.workload?.turn !== undefined);
    return check(
      'input-length',
      'warn',
      `${uncounted}/${ok.length} ${multiTurn ? 'multi-turn prompts' : 'prompts'} could not be counted ahead ` +
        "(the server's tokenizer gave no exact count: it has none, or the count failed): their input length is the server's own count, not verified",
    );
  }
  const unknown = ok.length - known.length;
  if (unknown > 0) {
    return check(
      'input-length',
      'warn',
      `the server reported no prompt_tokens for ${unknown}/${ok.length} requests: input length not verified, ` +
        `and total tok/s counts the requested ${distinct(ok.map((r) => r.expectedIn)).join('/')} for them`,
    );
  }
  return check(
    'input-length',
    'pass',
    `${ok.length}/${ok.length} prompts had exactly ${fmtLengths(ok.map((r) => r.expectedIn))} tokens (server count)`,
    'exact',
    { requests: ok.length },
  );
}

/**
 * streaming: tokens arrived over time, judged by time against the decode time they must have taken (judgeStreaming
 * in streaming-check.ts); a burst no longer than the loop lag this check's client limits let pass may be the client's.
 * serverDecode: the engine's own per-level decode figure, where it reports one. A stream that passed whose ITL is
 * dominated by events read together (`coalescedItl`, see coalesced-itl.ts) warns: its ITL is not the server's.
 * `host`: the host's CPU pressure over the level; a stall while it was busy is said to be the host's.
 */
export function streamingCheck(
  records: readonly RequestRecord[],
  clientLoopLagP99Ms: number | null = null,
  serverDecode: ServerDecodeFigure | null = null,
  coalescedItl: CoalescedItlFinding | null = null,
  host: HostPressure | null = null,
): Check {
  const judged = judgeStreaming(records, {
    loopLagP99Ms: clientLoopLagP99Ms,
    loopLagLimitMs: CLIENT_LIMITS.loopLagWarnMs,
    serverDecode,
    host,
  });
  if (judged.status !== 'pass' || !coalescedItl) return judged;
  return check('streaming', 'warn', `${judged.detail}; ${coalescedItl.text}`, 'itl-coalesced', {
    ...judged.facts,
    ...coalescedItl.facts,
  });
}

/**
 * warmup: warm-up requests (records with warmup true) were sent and discarded before measuring. Passes when at
 * least one of them succeeded; warns when warm-up was off, or when every warm-up request failed (the server was not
 * warmed by them).
 */
export function warmupCheck(records: readonly RequestRecord[]): Check {
  const warmup = records.filter((r) => r.warmup);
  if (warmup.length === 0) {
    return check(
      'warmup',
      'warn',
      'warm-up was off: the first measured requests include cold-start effects (graph capture, caches, allocator)',
    );
  }
  const ok = warmup.filter((r) => r.ok).length;
  if (ok === 0) {
    const kinds = fmtCounts(countBy(warmup, (r) => r.errorKind ?? 'unknown'));
    return check(
      'warmup',
      'warn',
      `warm-up requests all failed: the server was not warm (${warmup.length}/${warmup.length} failed: ${kinds}); ` +
        'the first measured requests may include cold-start effects',
    );
  }
  const failedText = ok < warmup.length ? ` (${warmup.length - ok} failed)` : '';
  return check(
    'warmup',
    'pass',
    `${ok}/${warmup.length} warm-up requests succeeded${failedText}; warm-up was discarded before measuring`,
  );
}

/**
 * round-spread: CV of per-round output tok/s of the COMPLETE rounds at most 15 %; fewer than 2 complete rounds cannot
 * show a spread. partialRounds (rounds cut short by a cancel or a dying server) are left out and named; with no
 * complete round at all the level has no throughput, which the check warns about. In open loop (`openLoop`: the
 * complete rounds' arrivals) a round's throughput follows its own random arrivals: the rounds are judged against
 * what their arrivals offered instead (open-loop-spread.ts), so the 15 % stays about the server's speed.
 */
export function roundSpreadCheck(
  perRoundOutputTokPerSec: readonly number[],
  partialRounds: number = 0,
  uncountedRequests: number = 0,
  openLoop: readonly OpenLoopRound[] | null = null,
): Check {
  const rounds = perRoundOutputTokPerSec.length;
  if (uncountedRequests > 0) {
    return check(
      'round-spread',
      'warn',
      `no spread: the server's output count of ${plural(uncountedRequests, 'request')} was impossible ` +
        '(see token-agreement), so per-round throughput is unknown',
      'output-count-impossible',
      { uncountedRequests },
    );
  }
  const list = `${perRoundOutputTokPerSec.map(fmtNum).join(', ')} tok/s`;
  const leftOut = partialRounds > 0 ? `; ${plural(partialRounds, 'partial round')} left out` : '';
  const facts = { rounds, partialRounds, limit: ROUND_CV_LIMIT };
  if (rounds === 0 && partialRounds > 0) {
    return check(
      'round-spread',
      'warn',
      `no round completed: ${partialRounds === 1 ? 'the partial round' : `${partialRounds} partial rounds`} ` +
        '(cut short by a cancel or a server failure) give no throughput, cost or spread',
      'no-complete-round',
      facts,
    );
  }
  if (rounds < 2) {
    return check(
      'round-spread',
      'warn',
      `${plural(rounds, partialRounds > 0 ? 'complete round' : 'round')} (${list})${leftOut}: run at least 2 rounds to see the spread`,
      'too-few-rounds',
      facts,
    );
  }
  const cv = coefficientOfVariation(perRoundOutputTokPerSec);
  if (cv === null)
    return check(
      'round-spread',
      'warn',
      `no output in ${rounds} rounds${leftOut}: spread undefined`,
      'no-output',
      facts,
    );
  const head = `CV ${fmtPct(cv)} over ${rounds} rounds (${list})${leftOut}`;
  if (openLoop && openLoop.length === rounds) {
    const judged = judgeOpenLoopSpread(cv, ROUND_CV_LIMIT, openLoop);
    return check('round-spread', judged.status, head + judged.text, judged.code, { ...facts, ...judged.facts });
  }
  if (cv <= ROUND_CV_LIMIT) return check('round-spread', 'pass', head, 'steady', { ...facts, cv });
  return check(
    'round-spread',
    'fail',
    `${head} exceeds ${fmtPct(ROUND_CV_LIMIT)}: look for throttling or other load on the GPU`,
    'spread-over-limit',
    { ...facts, cv },
  );
}

/** Why a level was cut short, as summarizeLevel is told it. */
export interface CutShort {
  /** One line, e.g. "the server died: CUDA out of memory" or "cancelled by the user". */
  reason: string;
  /** True when the server failed (a crash), false for a user cancel. */
  byServer: boolean;
}

/**
 * cut-short: the level ended before its rounds were done. Fails when the server ended it, warns on a user cancel;
 * says whether throughput, cost and round spread come from the complete rounds or, with none, do not exist (a partial
 * round's rate counts the requests that finished before the crash over a window they did not fill).
 */
export function cutShortCheck(cut: CutShort, rounds: readonly RoundResult[]): Check {
  const complete = rounds.filter((r) => r.partial !== true).length;
  const partial = rounds.filter((r) => r.partial === true);
  const done = partial.reduce((a, r) => a + r.completed, 0);
  const failedInPartial = partial.reduce((a, r) => a + r.failed, 0);
  const partialText =
    partial.length > 0 ? `the partial round (${done} completed, ${failedInPartial} failed)` : 'no partial round';
  const figures =
    complete === 0
      ? `${partialText} gives no throughput, cost or round spread`
      : `throughput, cost and round spread come from the ${plural(complete, 'complete round')} only; ${partialText} is left out`;
  return check(
    'cut-short',
    cut.byServer ? 'fail' : 'warn',
    `level cut short after ${plural(complete, 'complete round')}: ${cut.reason}; ${figures}`,
  );
}

/** sample-size: every percentile shown (p95, p99) has its confidence interval; warns naming the ones that lack one. */
export function sampleSizeCheck(
  summary: Summary,
  metric: string = 'TTFT',
  confidence: number = DEFAULT_CONFIDENCE,
): Check {
  const missing: string[] = [];
  if (summary.p95Ci === null) missing.push(`p95 needs ${minSamplesForCi(95, confidence)}`);
  if (summary.p99Ci === null) missing.push(`p99 needs ${minSamplesForCi(99, confidence)}`);
  if (missing.length === 0) {
    return check(
      'sample-size',
      'pass',
      `${summary.n} ${metric} samples: p95 and p99 carry ${fmtPct(confidence)} confidence intervals`,
    );
  }
  return check(
    'sample-size',
    'warn',
    `${summary.n} ${metric} samples are too few for a ${fmtPct(confidence)} confidence interval (${missing.join(', ')}): ` +
      'treat those percentiles as rough, or run more requests',
  );
}

/**
 * errors: failed requests are counted, never dropped; warns up to 1 % failed, fails above, counting by error kind and
 * quoting the server's commonest message.
 * Requests the user cancelled (errorKind 'cancelled') are no server failure: left out of the count and the share,
 * and only named. A dying server ('server-died') is a failure. Multi-turn: `skippedTurns` (later turns of conversations
 * whose earlier turn failed, never sent) are named, not counted in the share.
 */
export function errorsCheck(records: readonly RequestRecord[], skippedTurns = 0): Check {
  const all = records.filter(isMeasured);
  const cancelled = all.filter(isCancelled).length;
  const measured = all.filter((r) => !isCancelled(r));
  const failed = measured.filter((r) => !r.ok);
  const aside =
    // Cancelled by a stop (Ctrl-C, the app's Cancel, SIGTERM): not failures, whoever stopped the run.
    (cancelled > 0 ? `; ${cancelled} cancelled when the run was stopped, not counted` : '') +
    (skippedTurns > 0
      ? `; ${plural(skippedTurns, 'later turn')} not sent because an earlier turn of the conversation failed`
      : '');
  if (failed.length === 0) return check('errors', 'pass', `0/${measured.length} requests failed${aside}`);
  const share = failed.length / measured.length;
  const top = commonestError(failed);
  const said = top ? serverSaid(top) : '';
  const detail =
    `${failed.length}/${measured.length} requests failed (${fmtPct(share)}): ` +
    `${fmtCounts(countBy(failed, (r) => r.errorKind ?? 'unknown'))}${aside}` +
    (said ? `; ${said}` : '');
  return check('errors', share <= ERROR_WARN_LIMIT ? 'warn' : 'fail', detail);
}

/** Inputs of the prefix-cache check. */
export interface PrefixCacheInput {
  uniquePrefix: boolean;
  /** Requests share prefixes on purpose (shared-prefix groups, trace hash ids): hits are the point, not a flaw. */
  sharedPrefixes?: boolean;
  /** Growth of the engine's prefix-cache hit counter over the level, when it exposes one. */
  prefixCacheHitsDelta?: number | null;
  /** Cached prompt tokens the server's responses reported (llama.cpp always; vLLM and SGLang behind a flag). */
  responseCache?: ResponseCache | null;
  /** Tokens of the opening every unique prompt shares (chat template, first words), by the server's count. */
  openingTokens?: number | null;
  /** Measured requests of the level: the engine's hits per request are compared with that opening. */
  measuredRequests?: number;
  /** Multi-turn level: later turns resend the history, so hits on it are the point, not a flaw. */
  multiTurn?: boolean;
  /** Prompts from a file, sent as written: they share what real prompts share, so some hits are the workload's. */
  promptsFromFile?: boolean;
  /** File prompts: measured requests whose record was already sent on this server configuration. */
  repeatedRecords?: number;
  /** Responses whose cached_tokens could not be true (left out of responseCache). */
  impossibleCached?: ImpossibleUsage | null;
}

/** What the level's evidence on the prefix cache says, in words: the engine's counter first, else its responses. */
function cacheEvidence(hits: number | null, rc: ResponseCache | null): string {
  const engine = hits !== null ? `the engine reports ${fmtNum(hits)} prefix-cache hits` : null;
  if (rc === null) return engine ?? 'engine hit counter unavailable';
  const of = rc.requests < rc.of ? ` (${rc.requests} of ${rc.of} responses said)` : '';
  const responses = `the server's responses report ${fmtNum(rc.cachedTokens)} cached prompt tokens${of}`;
  // Both: the counter is scraped once a second, so a short level's delta can miss what the responses saw.
  return engine ? `${engine}; ${responses}` : responses;
}

/**
 * prefix-cache: prompts were unique, so no request rode on another's cache; warns on the cached case or on reported
 * hits, and where responses reported impossible cached_tokens (named first; they count nowhere).
 */
export function prefixCacheCheck(input: PrefixCacheInput): Check {
  const verdict = prefixCacheVerdict(input);
  const bad = input.impossibleCached;
  if (!bad) return verdict;
  const status = verdict.status === 'fail' ? 'fail' : 'warn';
  return check('prefix-cache', status, `${bad.detail}; ${verdict.detail}`, bad.code, bad.facts);
}

function prefixCacheVerdict(input: PrefixCacheInput): Check {
  const hits = input.prefixCacheHitsDelta ?? null;
  const rc = input.responseCache ?? null;
  const seen = cacheEvidence(hits, rc);
  if (input.sharedPrefixes) {
    return check(
      'prefix-cache',
      'pass',
      `requests share prompt prefixes on purpose (the rest of each prompt is unique); ${seen}`,
    );
  }
  if (input.promptsFromFile) {
    const repeats = input.repeatedRecords ?? 0;
    if (repeats > 0) {
      return check(
        'prefix-cache',
        'warn',
        `${repeats} requests resent a record of the prompt file already sent in this run (the file holds fewer records than the run sends): those may be served from the prefix cache (${seen}); use a longer file or fewer requests`,
      );
    }
    return check(
      'prefix-cache',
      'pass',
      `prompts come from the file as written, each record once: they share only what real prompts share (chat template, common openings); ${seen}`,
    );
  }
  if (!input.uniquePrefix) {
    return check(
      'prefix-cache',
      'warn',
      `unique prompt prefixes were off: measuring the cached case, so TTFT is lower than for fresh prompts (${seen})`,
    );
  }
  if (input.multiTurn) {
    return check(
      'prefix-cache',
      'pass',
      `every conversation starts with a unique prefix; later turns resend the history, so the prefix cache may serve it (that is what multi-turn measures): ${seen}`,
    );
  }
  // Per response, a few cached tokens are the opening every prompt shares (the chat template's, the first words).
  if (rc !== null && rc.mostlyCachedRequests > 0) {
    return check(
      'prefix-cache',
      'warn',
      `${rc.mostlyCachedRequests} requests had half or more of their prompt past the shared opening served from the prefix cache by the server's own account despite unique prompts: their TTFT is that of the cached case`,
    );
  }
  const opening = input.openingTokens ?? null;
  const perRequest = hits !== null && (input.measuredRequests ?? 0) > 0 ? hits / input.measuredRequests! : null;
  if (hits !== null && hits > 0 && !(perRequest !== null && opening !== null && perRequest <= opening)) {
    return check(
      'prefix-cache',
      'warn',
      `the engine reports ${fmtNum(hits)} prefix-cache hits despite unique prompts` +
        (perRequest !== null && opening !== null
          ? ` (${fmtNum(perRequest)} tokens per request, more than the ${opening}-token opening every prompt shares)`
          : '') +
        ': some requests may have reused cached prefill',
    );
  }
  const shared =
    opening !== null ? `the ${opening}-token opening` : rc !== null ? `the ${rc.openingTokens}-token opening` : null;
  return check(
    'prefix-cache',
    'pass',
    `every prompt starts with a unique prefix; ${seen}` +
      (shared !== null && ((hits ?? 0) > 0 || (rc?.cachedTokens ?? 0) > 0)
        ? `: no more than ${shared} every prompt shares (chat template, first words), which real traffic caches too`
        : ''),
  );
}

/** Inputs of the client check; lags in ms, null where not measured (schedule lag exists only in open loop). */
export interface ClientInput {
  loopLagP99Ms: number | null;
  /** Open loop: p99 of send - scheduled over the sends the client answers for (not those a full cap held back). */
  scheduleLagP99Ms: number | null;
  /** The load really offered (absent: not measured); see src/shared/offered-load.ts. */
  offered?: OfferedLoad;
  /** Closed loop: the asked concurrency. */
  askedConcurrency?: number;
  /** Open loop: the asked rate (req/s), and how much longer the sends took than their schedules (summed over rounds). */
  askedRate?: number;
  rateLateMs?: number;
  rateRounds?: number;
  /** Open loop: the --max-concurrency cap, if any. */
  cap?: number;
  /** The host's CPU pressure over the level (null: not readable): a lag while it was busy is the host's. */
  host?: HostPressure | null;
}

/** One reason behind the client check's verdict. */
interface ClientFinding {
  status: CheckStatus;
  code: string;
  text: string;
}

/** Closed loop: did the lanes hold the asked concurrency (requests, or conversations in multi-turn)? */
function offeredConcurrencyFinding(input: ClientInput, facts: Record<string, CheckFact>): ClientFinding | null {
  const o = input.offered;
  const asked = input.askedConcurrency;
  const mean = o?.conversationsMean ?? o?.inFlightMean;
  if (mean === undefined || asked === undefined || asked <= 0) return null;
  const p5 = o?.conversationsP5 ?? o?.inFlightP5 ?? null;
  const what = o?.conversationsMean !== undefined ? 'conversations' : 'requests';
  const ratio = mean / asked;
  Object.assign(facts, { achievedConcurrency: mean, achievedConcurrencyP5: p5, askedConcurrency: asked, ratio });
  if (o?.conversationsMean !== undefined) facts.achievedRequestsInFlight = o.inFlightMean ?? null;
  const held = `${fmtNum(mean)} ${what} in flight on average of c=${asked} asked (${fmtPct(ratio)}, p5 ${p5 ?? '—'})`;
  if (ratio >= OFFERED_MIN_SHARE) return { status: 'pass', code: 'offered-as-asked', text: held };
  const afterFailures = o?.shortfallAfterFailures ?? 0;
  facts.shortfallAfterFailures = afterFailures;
  if (afterFailures >= 0.5) {
    return {
      status: 'warn',
      code: 'offered-below-asked-failures',
      text: `${held}: ${fmtPct(afterFailures)} of the shortfall came after requests the server failed fast (the errors check judges them), not from the client`,
    };
  }
  return {
    status: 'fail',
    code: 'offered-below-asked',
    text: `${held}, below ${fmtPct(OFFERED_MIN_SHARE)}: the client was the bottleneck; this level offered c≈${fmtNum(mean)}, not c=${asked}`,
  };
}

/** Open loop: were the requests sent at the rate their schedule asked? */
function offeredRateFinding(input: ClientInput, facts: Record<string, CheckFact>): ClientFinding | null {
  const o = input.offered;
  if (o?.ratePerSec === undefined || o.scheduledRatePerSec === undefined) return null;
  const ratio = o.ratePerSec / o.scheduledRatePerSec;
  Object.assign(facts, {
    achievedRate: o.ratePerSec,
    scheduledRate: o.scheduledRatePerSec,
    askedRate: input.askedRate ?? null,
    ratio,
  });
  const sent = `${fmtNum(o.ratePerSec)} req/s sent of the schedule's ${fmtNum(o.scheduledRatePerSec)} (${fmtPct(ratio)}${input.askedRate !== undefined ? `; ${input.askedRate} req/s asked` : ''})`;
  // A short schedule's rate moves with a few ms of lag: lateness (summed over the rounds) within the schedule-lag
  // limits per round is judged as those limits judge a lag (pass, then warn); beyond the fail limit it fails.
  const lateMs = input.rateLateMs ?? 0;
  const rounds = input.rateRounds ?? 1;
  facts.rateLateMs = lateMs;
  if (ratio >= OFFERED_MIN_SHARE || lateMs <= rounds * CLIENT_LIMITS.scheduleLagWarnMs)
    return { status: 'pass', code: 'offered-as-asked', text: sent };
  if ((o.heldByCap ?? 0) > 0) {
    facts.heldByCap = o.heldByCap ?? 0;
    return {
      status: 'warn',
      code: 'rate-held-by-cap',
      text: `${sent}: the --max-concurrency cap of ${input.cap ?? '?'} was full for ${plural(o.heldByCap ?? 0, 'send')} (the server was slower than the rate), not the client`,
    };
  }
  return {
    status: lateMs > rounds * CLIENT_LIMITS.failMs ? 'fail' : 'warn',
    code: 'offered-below-asked',
    text: `${sent}, below ${fmtPct(OFFERED_MIN_SHARE)}, ${fmtNum(lateMs)} ms behind the schedule: the client was the bottleneck; this level offered ${fmtNum(o.ratePerSec)} req/s`,
  };
}

/** Event-loop lag and schedule lag against CLIENT_LIMITS; a lag while the host was busy is named as the host's. */
function lagFinding(input: ClientInput): ClientFinding {
  const found = ownLagFinding(input);
  if (found.code !== 'client-lag') return found;
  const busy = hostBusy(input.host);
  const pressure = hostPressureText(input.host);
  if (busy === true) {
    return {
      status: found.status,
      code: 'host-busy',
      text: `${found.figures}: the host was busy (${pressure}): other processes kept this client from the CPU, so its timings are not the server's`,
    };
  }
  return { ...found, text: `${found.text} (${busy === false ? `the host was not busy: ${pressure}` : pressure})` };
}

function ownLagFinding(input: ClientInput): ClientFinding & { figures: string } {
  const { loopLagP99Ms: loop, scheduleLagP99Ms: sched } = input;
  const parts: string[] = [];
  if (loop !== null) parts.push(`event-loop lag p99 ${fmtNum(loop)} ms`);
  if (sched !== null) parts.push(`schedule lag p99 ${fmtNum(sched)} ms`);
  const figures = parts.join(', ');
  if ((loop !== null && loop > CLIENT_LIMITS.failMs) || (sched !== null && sched > CLIENT_LIMITS.failMs)) {
    return {
      figures,
      status: 'fail',
      code: 'client-lag',
      text: `${figures} (over ${CLIENT_LIMITS.failMs} ms): the client is the bottleneck; its timings are not the server's`,
    };
  }
  if (
    (loop !== null && loop > CLIENT_LIMITS.loopLagWarnMs) ||
    (sched !== null && sched > CLIENT_LIMITS.scheduleLagWarnMs)
  ) {
    return {
      figures,
      status: 'warn',
      code: 'client-lag',
      text: `${figures} (limits ${CLIENT_LIMITS.loopLagWarnMs} / ${CLIENT_LIMITS.scheduleLagWarnMs} ms): the client may be the bottleneck`,
    };
  }
  if (loop === null) {
    return {
      figures,
      status: 'warn',
      code: 'loop-lag-unknown',
      text: `event-loop lag was not measured${figures ? ` (${figures})` : ''}: the client's own delay is unknown`,
    };
  }
  return { figures, status: 'pass', code: 'kept-up', text: figures };
}

/**
 * client: servebench itself was not the bottleneck. It offered the asked load (closed loop: time-averaged requests in
 * flight, or conversations in multi-turn, at least OFFERED_MIN_SHARE of the concurrency; open loop: the schedule's
 * rate), and its event-loop lag and schedule lag stayed small. A shortfall that followed fast server failures, or
 * that a full --max-concurrency cap caused, only warns: it is not the client's. Code and facts name the worst reason.
 */
export function clientCheck(input: ClientInput): Check {
  const facts: Record<string, CheckFact> = {
    loopLagP99Ms: input.loopLagP99Ms,
    scheduleLagP99Ms: input.scheduleLagP99Ms,
    hostBusy: hostBusy(input.host),
    hostCpuSomeShare: input.host?.cpuSomeShare ?? null,
    hostSelfWaitShare: input.host?.selfWaitShare ?? null,
  };
  const busy = hostBusy(input.host) === true;
  const findings = [offeredConcurrencyFinding(input, facts), offeredRateFinding(input, facts), lagFinding(input)]
    .filter((f): f is ClientFinding => f !== null)
    // A client that fell short while other processes held the CPU was held back by the host, not by its own work.
    .map((f) =>
      busy && f.code === 'offered-below-asked'
        ? { ...f, text: `${f.text}; the host was busy (${hostPressureText(input.host)}): other processes held it back` }
        : f,
    );
  const status = worstStatus(findings.map((f) => f.status));
  const worst = findings.find((f) => f.status === status) as ClientFinding;
  // The failing reason first, then the figures that passed.
  const ordered = [...findings].sort((a, b) => SEVERITY[b.status] - SEVERITY[a.status]);
  const detail = ordered
    .map((f) => f.text)
    .filter(Boolean)
    .join('; ');
  return status === 'pass'
    ? check('client', 'pass', `${detail}: the client kept up`, 'kept-up', facts)
    : check('client', status, detail, worst.code, facts);
}

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

/**
 * The client's times against the server's own (llama.cpp `timings`), for the ok requests that carry them. The
 * decode span (first to last token chunk) should match predicted_ms; TTFT includes queueing and transport, so it
 * may exceed prompt_ms by any amount but never fall short of it.
 */
export function serverTimingProblems(ok: readonly RequestRecord[]): { problems: string[]; note?: string } {
  const timed = ok.filter(
    (r) =>
      r.serverPromptMs !== undefined &&
      r.serverDecodeMs !== undefined &&
      r.firstTokenMs !== null &&
      r.chunks.length > 0,
  );
  if (timed.length === 0) return { problems: [] };
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
  return { problems, note };
}

/**
 * token-agreement: the client's count (sum of per-chunk usage, or chunks where the server gives no per-chunk usage)
 * against the server's completion_tokens; warns when they differ, because chunks are not tokens. Also warns on lost
 * or malformed stream events, which a matching sum hides: SSE lines that were not valid JSON (malformedLines of the
 * measured requests), and, where chunk token counts come from the server, chunks carrying more tokens than the
 * request's usual chunk size. Where the server times each request itself (llama.cpp), its decode time and prompt
 * time are compared to the client's (serverTimingProblems).
 */
export function tokenAgreementCheck(records: readonly RequestRecord[]): Check {
  const measured = records.filter(isMeasured);
  const ok = okMeasured(records);
  const impossible =
    impossibleUsage(ok, 'completion_tokens', 'TPOT, ITL per token, tok/s, cost and goodput on TPOT are left out') ??
    impossibleUsage(ok, 'reasoning_tokens', 'the reasoning/answer split counts chunks instead');
  if (impossible) {
    const fail = impossible.facts.field === 'completion_tokens';
    return check('token-agreement', fail ? 'fail' : 'warn', impossible.detail, impossible.code, impossible.facts);
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
  if (comparable.length === 0) {
    return check(
      'token-agreement',
      'warn',
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
    if (problems.length === 0) return check('token-agreement', 'pass', agree);
    return check('token-agreement', 'warn', `${problems.join('; ')} (${agree})`);
  }
  const ratio = median(differ.filter((r) => r.nOut > 0).map((r) => clientCount(r) / r.nOut));
  const sample = differ[0]!;
  const estimatedPerChunk = differ.some((r) => r.chunkTokensSource === 'estimated');
  return check(
    'token-agreement',
    'warn',
    `${differ.length}/${comparable.length} requests: client counted ${fmtNum(clientCount(sample))} vs server ${fmtNum(sample.nOut)} tokens ` +
      `(median ratio ${Number.isNaN(ratio) ? 'n/a' : fmtNum(ratio)}); chunks are not tokens, so token figures use the server's count` +
      (estimatedPerChunk ? ' and ITL per token assumes one token per chunk' : '') +
      streamText,
  );
}

/** The worst of some statuses (fail > warn > pass). */
export function worstStatus(statuses: readonly CheckStatus[]): CheckStatus {
  return statuses.reduce<CheckStatus>((w, s) => (SEVERITY[s] > SEVERITY[w] ? s : w), 'pass');
}

/**
 * Run-level checks: per id the worst status over levels, the detail naming the levels at each non-pass status
 * and quoting the first worst level's detail. levelLabels (e.g. "c=8") default to "level 1", "level 2", ...
 */
export function combineChecks(levelsChecks: readonly (readonly Check[])[], levelLabels?: readonly string[]): Check[] {
  const byId = new Map<CheckId, Array<{ level: string; check: Check }>>();
  levelsChecks.forEach((checks, i) => {
    const level = levelLabels?.[i] ?? `level ${i + 1}`;
    for (const c of checks) {
      const list = byId.get(c.id) ?? [];
      list.push({ level, check: c });
      byId.set(c.id, list);
    }
  });
  const out: Check[] = [];
  for (const [id, list] of byId) {
    const status = worstStatus(list.map((e) => e.check.status));
    if (status === 'pass') {
      out.push(check(id, 'pass', list.length === 1 ? list[0]!.check.detail : `pass at all ${list.length} levels`));
      continue;
    }
    const worst = list.find((e) => e.check.status === status)!;
    const at = (s: CheckStatus): string[] => list.filter((e) => e.check.status === s).map((e) => e.level);
    const parts = [`${status} at ${at(status).join(', ')}`];
    if (status === 'fail' && at('warn').length > 0) parts.push(`warn at ${at('warn').join(', ')}`);
    out.push(check(id, status, `${parts.join('; ')} (${worst.level}: ${worst.check.detail})`));
  }
  return out;
}
