import type { CheckFact, CheckId } from '../../shared/run-record.js';
import { fmtPct } from '../metrics/format.js';
import { plural } from './helpers.js';
import type { Facts } from './verdict.js';

/** One sentence per code of a check, made from its facts only. */
type Sentences = Record<string, (f: Facts) => string>;

const num = (f: Facts, key: string): number => f[key] as number;
const str = (f: Facts, key: string): string => String(f[key] ?? '');
const pct = (x: CheckFact | undefined): string => `${Math.round((x as number) * 100)} %`;
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
    `${num(f, 'samples')} ${str(f, 'metric')} samples: p95 and p99 carry ${fmtPct(num(f, 'confidence'))} confidence intervals`,
  'too-few-samples': (f) => {
    const missing: string[] = [];
    if (f.p95Ci === false) missing.push(`p95 needs ${num(f, 'p95MinSamples')}`);
    if (f.p99Ci === false) missing.push(`p99 needs ${num(f, 'p99MinSamples')}`);
    return (
      `${num(f, 'samples')} ${str(f, 'metric')} samples are too few for a ${fmtPct(num(f, 'confidence'))} confidence ` +
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
  `${num(f, 'failed')}/${num(f, 'requests')} requests failed (${fmtPct(num(f, 'share'))}): ` +
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
};

/** The checks whose sentences are made here, from their code and facts. */
const SENTENCES: Partial<Record<CheckId, Sentences>> = {
  warmup: WARMUP,
  'sample-size': SAMPLE_SIZE,
  errors: ERRORS,
  'cut-short': CUT_SHORT,
  server: SERVER,
  preemptions: PREEMPTIONS,
  throttling: THROTTLING,
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
