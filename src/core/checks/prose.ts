import { fmtNumber, fmtRange, fmtShare } from '../../shared/format.js';
import { OFFERED_MIN_SHARE } from '../../shared/offered-load.js';
import { STATUS_SEVERITY, worstStatus } from '../../shared/check-status.js';
import type { CheckFact, CheckId, CheckStatus } from '../../shared/run-record.js';
import { hostPressureText } from '../telemetry/host-pressure.js';
import { CLIENT_LIMITS } from './client-limits.js';
import { plural } from './helpers.js';
import { STREAMING } from './streaming-prose.js';
import { TELEMETRY_DROP_CODES, telemetryIssuesText } from './telemetry-issues-prose.js';
import { impossibleUsageText } from './usage-prose.js';
import type { Facts } from './verdict.js';

/** One sentence per code of a check, made from its facts only. */
export type Sentences = Record<string, (f: Facts) => string>;

const num = (f: Facts, key: string): number => f[key] as number;
const str = (f: Facts, key: string): string => String(f[key] ?? '');
const pct = (x: CheckFact | undefined): string => `${Math.round((x as number) * 100)} %`;
/** The head, then the sentence of the verdict it names first (its code is the fact verdictCode), where there is one. */
const thenVerdict =
  (id: CheckId, head: (f: Facts) => string) =>
  (f: Facts): string =>
    typeof f.verdictCode === 'string' ? `${head(f)}; ${renderCheck(id, f.verdictCode, f)}` : head(f);

/** A telemetry source's issues (dropped, impossible values), each code of them named before the check's verdict. */
function issueSentences(id: CheckId, what: 'gpu' | 'engine'): Sentences {
  const say = thenVerdict(id, telemetryIssuesText(what));
  return Object.fromEntries(
    [`impossible-${what}-values`, ...TELEMETRY_DROP_CODES.map((c) => `${what}-source-${c}`)].map((c) => [c, say]),
  );
}

/** "; NOTE" when the fact is a non-empty note, else nothing. */
const note = (x: CheckFact | undefined): string => (typeof x === 'string' && x !== '' ? `; ${x}` : '');

const WARMUP: Sentences = {
  'warmup-off': () =>
    'warm-up was off: the first measured requests include cold-start effects (graph capture, caches, allocator)',
  'warmup-failed': (f) =>
    `warm-up requests all failed: the server was not warm (${num(f, 'warmupRequests')}/${num(f, 'warmupRequests')} ` +
    `failed: ${str(f, 'errorKinds')}); the first measured requests may include cold-start effects`,
  warmed: (f) =>
    `${num(f, 'succeeded')}/${num(f, 'warmupRequests')} warm-up requests succeeded` +
    `${num(f, 'failed') > 0 ? ` (${num(f, 'failed')} failed)` : ''}; warm-up was discarded before measuring`,
};

const SAMPLE_SIZE: Sentences = {
  'intervals-shown': (f) =>
    `${num(f, 'samples')} ${str(f, 'metric')} samples: p95 and p99 carry ${fmtShare(num(f, 'confidence'), 1)} confidence intervals`,
  'too-few-samples': (f) => {
    const missing: string[] = [];
    if (f.p95Ci === false) missing.push(`p95 needs ${num(f, 'p95MinSamples')}`);
    if (f.p99Ci === false) missing.push(`p99 needs ${num(f, 'p99MinSamples')}`);
    return (
      `${num(f, 'samples')} ${str(f, 'metric')} samples are too few for a ${fmtShare(num(f, 'confidence'), 1)} confidence ` +
      `interval (${missing.join(', ')}): treat those percentiles as rough, or run more requests`
    );
  },
};

/** What the errors check says beside the count: cancelled requests and turns never sent. */
function errorsAside(f: Facts): string {
  const cancelled = num(f, 'cancelled');
  const skipped = num(f, 'skippedTurns');
  return (
    (cancelled > 0 ? `; ${cancelled} cancelled when the run was stopped, not counted` : '') +
    (skipped > 0
      ? `; ${plural(skipped, 'later turn')} not sent because an earlier turn of the conversation failed`
      : '')
  );
}

const failedText = (f: Facts): string =>
  `${num(f, 'failed')}/${num(f, 'requests')} requests failed (${fmtShare(num(f, 'share'), 1)}): ` +
  `${str(f, 'errorKinds')}${errorsAside(f)}${note(f.serverSaid)}`;

const ERRORS: Sentences = {
  'none-failed': (f) => `0/${num(f, 'requests')} requests failed${errorsAside(f)}`,
  'few-failed': failedText,
  'too-many-failed': failedText,
};

const partialText = (f: Facts): string =>
  num(f, 'partialRounds') > 0
    ? `the partial round (${num(f, 'completedInPartial')} completed, ${num(f, 'failedInPartial')} failed)`
    : 'no partial round';

const cutShortText = (f: Facts): string => {
  const complete = num(f, 'completeRounds');
  const figures =
    complete === 0
      ? `${partialText(f)} gives no throughput, cost or round spread`
      : `throughput, cost and round spread come from the ${plural(complete, 'complete round')} only; ${partialText(f)} is left out`;
  return `level cut short after ${plural(complete, 'complete round')}: ${str(f, 'reason')}; ${figures}`;
};

const CUT_SHORT: Sentences = { 'server-failed': cutShortText, cancelled: cutShortText };

const SERVER: Sentences = {
  'server-died': (f) => `${str(f, 'message')} — ${str(f, 'fix')}`,
  'never-ready': (f) => `the server never became ready: ${str(f, 'reason')}`,
  simulated: () => 'SIMULATED engine: these numbers come from the built-in simulator, not a GPU',
  'stayed-up': () => 'server stayed up for the whole run',
};

const kvText = (f: Facts): string =>
  f.kvUsagePeak !== null && f.kvUsagePeak !== undefined ? ` (KV cache peaked at ${pct(f.kvUsagePeak)})` : '';

const PREEMPTIONS: Sentences = {
  'none-preempted': () => 'the engine preempted no request',
  preempted: (f) =>
    `the engine preempted ${plural(num(f, 'preemptions'), 'request')} during the measured window${kvText(f)}: ` +
    'preempted requests are recomputed, so their latency includes that work',
  'count-unknown': () => 'unknown: no engine preemption count to go by',
  ...issueSentences('preemptions', 'engine'),
};

/** The slowdown reasons that covered some of the window, joined with "and". */
function slowText(f: Facts): string {
  const slow: string[] = [];
  if (num(f, 'thermalFraction') > 0) slow.push(`thermal slowdown ${pct(f.thermalFraction)}`);
  if (num(f, 'hwSlowdownFraction') > 0) slow.push(`hardware slowdown / power brake ${pct(f.hwSlowdownFraction)}`);
  return slow.join(' and ');
}

/** The clock and temperature figures of the window: the lowest clock for a slowdown, else the mean. */
function clockText(f: Facts, lowest: boolean): string {
  const parts: string[] = [];
  if (lowest && f.smClockMinMhz !== null) {
    const ratio = f.clockRatioMin !== null ? ` (${pct(f.clockRatioMin)} of max)` : '';
    parts.push(`lowest SM clock ${Math.round(num(f, 'smClockMinMhz'))} MHz${ratio}`);
  } else if (!lowest && f.clockRatioMean !== null) {
    parts.push(`SM clock ${pct(f.clockRatioMean)} of max on average`);
  }
  if (f.tempMaxC !== null) parts.push(`max ${Math.round(num(f, 'tempMaxC'))} °C`);
  return parts.join(', ');
}

const THROTTLING: Sentences = {
  'telemetry-unavailable': (f) => `unknown: ${str(f, 'reason')}`,
  'no-samples': () => 'unknown: no GPU sample fell in the measured window',
  'gpu-slowed': (f) =>
    `${slowText(f)} of the measured window${note(clockText(f, true))}: these numbers are not the card's full speed ` +
    '(check airflow and fans, let it cool between levels)',
  'reasons-unknown': (f) =>
    `unknown: the GPU reported no throttle reasons for ${pct(f.unknownFraction)} of the samples`,
  'brief-slowdown': (f) => `brief ${slowText(f)} of the measured window${note(clockText(f, true))}`,
  'power-capped': (f) =>
    `power-capped ${pct(f.powerCapFraction)} of the measured window (normal at full load: the card runs at its ` +
    `power limit${note(clockText(f, false))}); no thermal or hardware slowdown`,
  'no-slowdown': (f) => `no thermal or hardware slowdown${note(clockText(f, false))}`,
  ...issueSentences('throttling', 'gpu'),
};

/** The spread's figures: the CV over the complete rounds, their throughput, the partial rounds left out. */
function spreadHead(f: Facts): string {
  const leftOut = num(f, 'partialRounds') > 0 ? `; ${plural(num(f, 'partialRounds'), 'partial round')} left out` : '';
  return `CV ${fmtShare(num(f, 'cv'), 1)} over ${num(f, 'rounds')} rounds (${str(f, 'roundsTokPerS')} tok/s)${leftOut}`;
}

const against = (f: Facts): string =>
  `against what each round's own arrivals offered (${str(f, 'offeredReqPerSec')} req/s as scheduled)`;

const ROUND_SPREAD: Sentences = {
  'output-count-impossible': (f) =>
    `no spread: the server's output count of ${plural(num(f, 'uncountedRequests'), 'request')} was impossible ` +
    '(see token-agreement), so per-round throughput is unknown',
  'no-complete-round': (f) => {
    const partial = num(f, 'partialRounds');
    return (
      `no round completed: ${partial === 1 ? 'the partial round' : `${partial} partial rounds`} ` +
      '(cut short by a cancel or a server failure) give no throughput, cost or spread'
    );
  },
  'too-few-rounds': (f) => {
    const partial = num(f, 'partialRounds');
    const leftOut = partial > 0 ? `; ${plural(partial, 'partial round')} left out` : '';
    const rounds = plural(num(f, 'rounds'), partial > 0 ? 'complete round' : 'round');
    return `${rounds} (${str(f, 'roundsTokPerS')} tok/s)${leftOut}: run at least 2 rounds to see the spread`;
  },
  'no-output': (f) =>
    `no output in ${num(f, 'rounds')} rounds${num(f, 'partialRounds') > 0 ? `; ${plural(num(f, 'partialRounds'), 'partial round')} left out` : ''}: spread undefined`,
  steady: spreadHead,
  'spread-over-limit': (f) =>
    `${spreadHead(f)} exceeds ${fmtShare(num(f, 'limit'), 1)}: look for throttling or other load on the GPU`,
  'spread-follows-arrivals': (f) =>
    `${spreadHead(f)}: the rounds' throughput followed their random arrivals; ${against(f)} they differ by ` +
    `${fmtShare(num(f, 'shareCv'), 1)}, within ${fmtShare(num(f, 'limit'), 1)}: the server's speed held`,
  'server-speed-changed': (f) =>
    `${spreadHead(f)}; ${against(f)} the rounds differ by ${fmtShare(num(f, 'shareCv'), 1)}, over ` +
    `${fmtShare(num(f, 'limit'), 1)}: the server's speed changed between rounds: look for throttling or other load on the GPU`,
};

/** "250" or "250–260": the token counts from minTokens to maxTokens. */
const tokenRange = (f: Facts): string => fmtRange([num(f, 'minTokens'), num(f, 'maxTokens')]);

const OUTPUT_LENGTH: Sentences = {
  'no-completed-requests': () => 'no completed requests: output length could not be verified',
  'length-off': (f) =>
    `${num(f, 'wrongRequests')}/${num(f, 'requests')} requests produced ${tokenRange(f)} tokens instead of ` +
    `${str(f, 'expectedTokens')} (server count; finish reason ${str(f, 'finishReasons')}): ` +
    'latency and throughput are not for the requested length',
  'no-server-count': (f) =>
    `${num(f, 'estimatedRequests')}/${num(f, 'requests')} requests came without usage from the server, so their ` +
    'output length could not be verified (chunk-count estimate' +
    `${num(f, 'estimateDiffers') > 0 ? `, which differs from the request for ${num(f, 'estimateDiffers')}` : ''})`,
  exact: (f) =>
    `${num(f, 'requests')}/${num(f, 'requests')} requests produced exactly ${str(f, 'expectedTokens')} tokens (server count)`,
  'impossible-completion-tokens': impossibleUsageText('output length not verified for them'),
};

const promptsOff = (f: Facts): string =>
  `${num(f, 'wrongRequests')}/${num(f, 'requests')} prompts had ${tokenRange(f)} tokens instead of ` +
  `${str(f, 'expectedTokens')} (server count)${f.calibration ? `: ${str(f, 'calibration')}` : ''}`;

const INPUT_LENGTH: Sentences = {
  'no-completed-requests': () => 'no completed requests: input length could not be verified',
  'prompt-length-off': promptsOff,
  'calibration-inexact': promptsOff,
  'not-counted-ahead': (f) =>
    `${num(f, 'uncountedRequests')}/${num(f, 'requests')} ${f.multiTurn ? 'multi-turn prompts' : 'prompts'} could ` +
    "not be counted ahead (the server's tokenizer gave no exact count: it has none, or the count failed): their " +
    "input length is the server's own count, not verified",
  'no-prompt-usage': (f) =>
    `the server reported no prompt_tokens for ${num(f, 'unreportedRequests')}/${num(f, 'requests')} requests: ` +
    `input length not verified, and total tok/s counts the requested ${str(f, 'expectedTokens')} for them`,
  exact: (f) =>
    `${num(f, 'requests')}/${num(f, 'requests')} prompts had exactly ${str(f, 'expectedTokens')} tokens (server count)`,
  'impossible-prompt-tokens': impossibleUsageText(
    'input length not verified, and total tok/s is left out (it would rest on them)',
  ),
};

/** What the level's evidence on the prefix cache says: the engine's counter first, then the responses' own count. */
function cacheSeen(f: Facts): string {
  const engine =
    f.engineHits !== null ? `the engine reports ${fmtNumber(num(f, 'engineHits'))} prefix-cache hits` : null;
  if (f.cachedTokens === null) return engine ?? 'engine hit counter unavailable';
  const some = num(f, 'cacheResponses') < num(f, 'responses');
  const of = some ? ` (${num(f, 'cacheResponses')} of ${num(f, 'responses')} responses said)` : '';
  const responses = `the server's responses report ${fmtNumber(num(f, 'cachedTokens'))} cached prompt tokens${of}`;
  // Both: the counter is scraped once a second, so a short level's delta can miss what the responses saw.
  return engine ? `${engine}; ${responses}` : responses;
}

/** "(N tokens per request, more than the M-token opening every prompt shares)", where both are known. */
function perRequestText(f: Facts): string {
  if (f.hitsPerRequest === null || f.openingTokens === null) return '';
  return ` (${fmtNumber(num(f, 'hitsPerRequest'))} tokens per request, more than the ${num(f, 'openingTokens')}-token opening every prompt shares)`;
}

const PREFIX_CACHE: Sentences = {
  'shared-on-purpose': (f) =>
    `requests share prompt prefixes on purpose (the rest of each prompt is unique); ${cacheSeen(f)}`,
  'file-records-resent': (f) =>
    `${num(f, 'repeatedRecords')} requests resent a record of the prompt file already sent in this run (the file ` +
    `holds fewer records than the run sends): those may be served from the prefix cache (${cacheSeen(f)}); use a ` +
    'longer file or fewer requests',
  'file-prompts': (f) =>
    'prompts come from the file as written, each record once: they share only what real prompts share (chat ' +
    `template, common openings); ${cacheSeen(f)}`,
  'unique-prefix-off': (f) =>
    `unique prompt prefixes were off: measuring the cached case, so TTFT is lower than for fresh prompts (${cacheSeen(f)})`,
  'history-cached': (f) =>
    'every conversation starts with a unique prefix; later turns resend the history, so the prefix cache may serve ' +
    `it (that is what multi-turn measures): ${cacheSeen(f)}`,
  'served-from-cache': (f) =>
    `${num(f, 'mostlyCachedRequests')} requests had half or more of their prompt past the shared opening served ` +
    "from the prefix cache by the server's own account despite unique prompts: their TTFT is that of the cached case",
  'engine-hits': (f) =>
    `the engine reports ${fmtNumber(num(f, 'engineHits'))} prefix-cache hits despite unique prompts${perRequestText(f)}: ` +
    'some requests may have reused cached prefill',
  unique: (f) => {
    const cached = Number(f.engineHits ?? 0) > 0 || Number(f.cachedTokens ?? 0) > 0;
    const shared =
      f.sharedOpeningTokens !== null && cached
        ? `: no more than the ${num(f, 'sharedOpeningTokens')}-token opening every prompt shares (chat template, ` +
          'first words), which real traffic caches too'
        : '';
    return `every prompt starts with a unique prefix; ${cacheSeen(f)}${shared}`;
  },
  'impossible-cached-tokens': thenVerdict(
    'prefix-cache',
    impossibleUsageText('left out of the cache figures and the hit rate'),
  ),
};

/** How well the workers' clock offsets are known, and a round window's error from them. */
const clockFigures = (f: Facts): string =>
  `offsets known within ±${fmtNumber(num(f, 'uncertaintyMs'))} ms, moving at most ${fmtNumber(num(f, 'offsetChangeMs'))} ms over the level`;
const clockWhere = (f: Facts): string =>
  `a round window (shortest ${fmtNumber(num(f, 'shortestRoundMs'))} ms) is exact to within ` +
  `${fmtNumber(num(f, 'windowErrorMs'))} ms (${fmtShare(num(f, 'windowError'), 1)})`;

const CLOCK: Sentences = {
  'offset-missing': (f) =>
    `${str(f, 'workersWithoutOffset')} sent requests without a clock offset: their times on rank 0's timeline are not corrected`,
  'clocks-agree': (f) =>
    f.windowError === null
      ? `${clockFigures(f)}; no complete round to hold it against (latencies are each worker's own)`
      : `${clockFigures(f)}: ${clockWhere(f)}; latencies are each worker's own`,
  'clocks-coarse': (f) => `${clockFigures(f)}: ${clockWhere(f)}; latencies are each worker's own`,
  'clocks-too-coarse': (f) =>
    `${clockFigures(f)}: ${clockWhere(f)}, too coarse for this level's throughput; run longer rounds or reach rank 0 ` +
    'over a quieter network',
};

const ms = (f: Facts, key: string): string => `${fmtNumber(num(f, key))} ms`;

/** The stream's own problems, one clause each: invalid SSE lines, lost events, the server's timings against ours. */
function streamProblemTexts(f: Facts): string[] {
  const problems: string[] = [];
  const malformed = num(f, 'malformedLines');
  if (malformed > 0) {
    problems.push(
      `${malformed} SSE ${malformed === 1 ? 'line was' : 'lines were'} not valid JSON; tokens they carried were absorbed by the next chunk`,
    );
  }
  if (num(f, 'irregularChunkRequests') > 0) {
    problems.push(
      `${num(f, 'irregularChunkRequests')}/${num(f, 'serverChunkRequests')} requests had a chunk carrying more tokens ` +
        `than their usual chunk (e.g. ${fmtNumber(num(f, 'irregularExampleTokens'))} vs ` +
        `${fmtNumber(num(f, 'irregularExampleUsual'))}): a sign of lost stream events (or a server that sends ` +
        'variable-size chunks, e.g. speculative decoding), so ITL is not per token for those chunks',
    );
  }
  if (f.decodeProblem === true) {
    problems.push(
      `${num(f, 'decodeDisagrees')}/${num(f, 'serverTimedRequests')} requests: the client's decode time (first to ` +
        `last token, median ${ms(f, 'decodeOffClientMedianMs')}) disagrees with the server's own predicted_ms ` +
        `(median ${ms(f, 'decodeOffServerMedianMs')}): a busy client or a proxy that buffers the stream shifts the ` +
        "token times, so ITL and TPOT are not the server's",
    );
  }
  if (Number(f.firstTokenTooSoon ?? 0) > 0) {
    problems.push(
      `${num(f, 'firstTokenTooSoon')}/${num(f, 'serverTimedRequests')} requests saw their first token sooner than ` +
        "the server's own prompt_ms (impossible): the server timings or the client clock are wrong",
    );
  }
  return problems;
}

/** "; PROBLEM; PROBLEM" after a verdict, or nothing. */
const streamTail = (f: Facts): string =>
  streamProblemTexts(f)
    .map((p) => `; ${p}`)
    .join('');

/** The counts agreed: how, and the server's own timings beside the client's where it gave them. */
function agreeText(f: Facts): string {
  const timings =
    f.serverTimedRequests !== undefined
      ? `; server timings: decode median ${ms(f, 'clientDecodeMedianMs')} (client) vs ${ms(f, 'serverDecodeMedianMs')} ` +
        `(server), TTFT median ${ms(f, 'ttftMedianMs')} vs prompt ${ms(f, 'serverPromptMedianMs')}`
      : '';
  return (
    `client and server agree on output tokens for all ${num(f, 'serverCounted')} requests ` +
    `(${f.perChunkUsage ? 'per-chunk usage' : 'one token per chunk'})${timings}`
  );
}

const TOKEN_AGREEMENT: Sentences = {
  'no-completed-requests': (f) => `no completed requests to compare${streamTail(f)}`,
  'no-server-usage': (f) =>
    `the server reported no token usage: the client chunk count cannot be checked against a server count${streamTail(f)}`,
  agree: agreeText,
  'stream-problems': (f) => `${streamProblemTexts(f).join('; ')} (${agreeText(f)})`,
  'counts-differ': (f) =>
    `${num(f, 'differRequests')}/${num(f, 'serverCounted')} requests: client counted ` +
    `${fmtNumber(num(f, 'exampleClientCount'))} vs server ${fmtNumber(num(f, 'exampleServerCount'))} tokens (median ratio ` +
    `${f.medianRatio === null ? 'n/a' : fmtNumber(num(f, 'medianRatio'))}); chunks are not tokens, so token figures use ` +
    `the server's count${f.estimatedPerChunk ? ' and ITL per token assumes one token per chunk' : ''}${streamTail(f)}`,
  'impossible-completion-tokens': impossibleUsageText(
    'TPOT, ITL per token, tok/s, cost and goodput on TPOT are left out',
  ),
  'impossible-reasoning-tokens': impossibleUsageText('the reasoning/answer split counts chunks instead'),
};

/** The host's CPU pressure from the client check's facts, in words. */
const pressureText = (f: Facts): string =>
  hostPressureText({
    windowMs: 0,
    cpuSomeShare: (f.hostCpuSomeShare ?? null) as number | null,
    selfWaitShare: (f.hostSelfWaitShare ?? null) as number | null,
  });

/** The concurrency the client held, against the one asked. */
function concurrencyText(f: Facts): string {
  const p5 = f.achievedConcurrencyP5 ?? '—';
  const held =
    `${fmtNumber(num(f, 'achievedConcurrency'))} ${str(f, 'inFlightOf')} in flight on average of ` +
    `c=${num(f, 'askedConcurrency')} asked (${fmtShare(num(f, 'ratio'), 1)}, p5 ${String(p5)})`;
  switch (f.concurrencyFinding) {
    case 'offered-below-asked-failures':
      return (
        `${held}: ${fmtShare(num(f, 'shortfallAfterFailures'), 1)} of the shortfall came after requests the server ` +
        'failed fast (the errors check judges them), not from the client'
      );
    case 'offered-below-asked':
      return (
        `${held}, below ${fmtShare(OFFERED_MIN_SHARE, 1)}: the client was the bottleneck; this level offered ` +
        `c≈${fmtNumber(num(f, 'achievedConcurrency'))}, not c=${num(f, 'askedConcurrency')}`
      );
    default:
      return held;
  }
}

/** The rate the client sent at, against its schedule's. */
function rateText(f: Facts): string {
  const asked = f.askedRate !== null ? `; ${num(f, 'askedRate')} req/s asked` : '';
  const sent =
    `${fmtNumber(num(f, 'achievedRate'))} req/s sent of the schedule's ${fmtNumber(num(f, 'scheduledRate'))} ` +
    `(${fmtShare(num(f, 'ratio'), 1)}${asked})`;
  switch (f.rateFinding) {
    case 'rate-held-by-cap':
      return (
        `${sent}: the --max-concurrency cap of ${String(f.cap ?? '?')} was full for ` +
        `${plural(num(f, 'heldByCap'), 'send')} (the server was slower than the rate), not the client`
      );
    case 'offered-below-asked':
      return (
        `${sent}, below ${fmtShare(OFFERED_MIN_SHARE, 1)}, ${fmtNumber(num(f, 'rateLateMs'))} ms behind the schedule: the ` +
        `client was the bottleneck; this level offered ${fmtNumber(num(f, 'achievedRate'))} req/s`
      );
    default:
      return sent;
  }
}

/** The client's own lags against the limits; a lag while the host was busy is the host's. */
function lagText(f: Facts): string {
  const parts: string[] = [];
  if (f.loopLagP99Ms !== null) parts.push(`event-loop lag p99 ${fmtNumber(num(f, 'loopLagP99Ms'))} ms`);
  if (f.scheduleLagP99Ms !== null) parts.push(`schedule lag p99 ${fmtNumber(num(f, 'scheduleLagP99Ms'))} ms`);
  const figures = parts.join(', ');
  if (f.lagFinding === 'host-busy') {
    return (
      `${figures}: the host was busy (${pressureText(f)}): other processes kept this client from the CPU, so its ` +
      "timings are not the server's"
    );
  }
  if (f.lagFinding === 'loop-lag-unknown') {
    return `event-loop lag was not measured${figures ? ` (${figures})` : ''}: the client's own delay is unknown`;
  }
  if (f.lagFinding !== 'client-lag') return figures;
  const said =
    f.lagStatus === 'fail'
      ? `${figures} (over ${CLIENT_LIMITS.failMs} ms): the client is the bottleneck; its timings are not the server's`
      : `${figures} (limits ${CLIENT_LIMITS.loopLagWarnMs} / ${CLIENT_LIMITS.scheduleLagWarnMs} ms): the client may be the bottleneck`;
  const host = f.hostBusy === false ? `the host was not busy: ${pressureText(f)}` : pressureText(f);
  return `${said} (${host})`;
}

/** Each part of the client's work that was judged, worst first (a shortfall on a busy host says the host held it). */
function clientText(f: Facts): string {
  const parts: Array<{ status: CheckStatus; text: string }> = [];
  const shortfall = (text: string, code: CheckFact | undefined): string =>
    f.hostBusy === true && code === 'offered-below-asked'
      ? `${text}; the host was busy (${pressureText(f)}): other processes held it back`
      : text;
  if (f.concurrencyFinding !== undefined)
    parts.push({
      status: f.concurrencyStatus as CheckStatus,
      text: shortfall(concurrencyText(f), f.concurrencyFinding),
    });
  if (f.rateFinding !== undefined)
    parts.push({ status: f.rateStatus as CheckStatus, text: shortfall(rateText(f), f.rateFinding) });
  parts.push({ status: f.lagStatus as CheckStatus, text: lagText(f) });
  const detail = parts
    .sort((a, b) => STATUS_SEVERITY[b.status] - STATUS_SEVERITY[a.status])
    .map((p) => p.text)
    .filter(Boolean)
    .join('; ');
  return worstStatus(parts.map((p) => p.status)) === 'pass' ? `${detail}: the client kept up` : detail;
}

const CLIENT: Sentences = {
  'kept-up': clientText,
  'offered-below-asked': clientText,
  'offered-below-asked-failures': clientText,
  'rate-held-by-cap': clientText,
  'host-busy': clientText,
  'client-lag': clientText,
  'loop-lag-unknown': clientText,
};

const structuredAside = (f: Facts): string => `${str(f, 'problems')}; for example ${str(f, 'example')}`;

const STRUCTURED_OUTPUT: Sentences = {
  'all-valid': (f) =>
    `all ${num(f, 'answers')} answers were what ${str(f, 'asked')} asked` +
    (num(f, 'toolCalls') > 0 ? ` (${plural(num(f, 'toolCalls'), 'tool call')})` : ''),
  ignored: (f) =>
    `none of the ${num(f, 'answers')} answers was what ${str(f, 'asked')} asked: the server seems to ignore the ` +
    `constraint (no structured-output support, or it fell back to free text), so these figures are of unconstrained ` +
    `generation: ${structuredAside(f)}`,
  invalid: (f) =>
    `${num(f, 'invalid')}/${num(f, 'answers')} answers (${pct(f.share)}) were not what ${str(f, 'asked')} asked: ` +
    structuredAside(f),
};

/** The checks whose sentences are made here, from their code and facts. */
const SENTENCES: Partial<Record<CheckId, Sentences>> = {
  streaming: STREAMING,
  client: CLIENT,
  'token-agreement': TOKEN_AGREEMENT,
  clock: CLOCK,
  'prefix-cache': PREFIX_CACHE,
  'output-length': OUTPUT_LENGTH,
  'input-length': INPUT_LENGTH,
  'round-spread': ROUND_SPREAD,
  warmup: WARMUP,
  'sample-size': SAMPLE_SIZE,
  errors: ERRORS,
  'cut-short': CUT_SHORT,
  server: SERVER,
  preemptions: PREEMPTIONS,
  throttling: THROTTLING,
  'structured-output': STRUCTURED_OUTPUT,
};

/** The sentence for a check's code and facts; throws for a code it has no sentence for (a bug, caught by tests). */
export function renderCheck(id: CheckId, code: string, facts: Facts): string {
  const say = SENTENCES[id]?.[code];
  if (!say) throw new Error(`no sentence for check ${id}, code ${code}`);
  return say(facts);
}

/** The codes the renderer has sentences for, per check (tests render each once). */
export function renderedCodes(): Array<[CheckId, string]> {
  return Object.entries(SENTENCES).flatMap(([id, s]) =>
    Object.keys(s).map((code) => [id as CheckId, code] as [CheckId, string]),
  );
}
