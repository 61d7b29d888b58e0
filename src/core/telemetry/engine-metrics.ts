import type { EngineSample } from '../../shared/telemetry.js';
import type { Clock } from '../clock.js';
import { BodyTooLargeError, describeHttpError, isTimeout, MAX_SCRAPE_BYTES, type HttpGetText } from './http-get.js';
import { startPoller } from './poller.js';
import {
  LineTooLongError,
  maxMetric,
  parsePrometheusTextSliced,
  sumMetric,
  type PromText,
} from './prometheus-parser.js';
import { ENGINES, type MetricRef } from '../servers/engines/index.js';
import { boundEngineSample } from './sample-bounds.js';

type Reader = (text: PromText) => number | null;
type Field = Exclude<keyof EngineSample, 'tMs'>;

const FIELDS: Field[] = [
  'running',
  'waiting',
  'kvUsage',
  'preemptionsTotal',
  'prefixCacheHitsTotal',
  'prefixCacheQueriesTotal',
  'generationTokensTotal',
  'requestDecodeSecondsSum',
  'requestDecodeCount',
  'requestQueueSecondsSum',
  'requestQueueCount',
  'requestPrefillSecondsSum',
  'requestPrefillCount',
  'ttftSecondsSum',
  'ttftCount',
];

/** The histograms read as sum and count pairs: a sample carries a pair only where the engine exports both. */
const HISTOGRAM_PAIRS: Array<[Field, Field]> = [
  ['requestDecodeSecondsSum', 'requestDecodeCount'],
  ['requestQueueSecondsSum', 'requestQueueCount'],
  ['requestPrefillSecondsSum', 'requestPrefillCount'],
  ['ttftSecondsSum', 'ttftCount'],
];

function histogramPairs(text: PromText): Partial<EngineSample> {
  const out: Partial<Record<Field, number>> = {};
  for (const [sumField, countField] of HISTOGRAM_PAIRS) {
    const sum = ENGINE_METRIC_READERS[sumField](text);
    const count = ENGINE_METRIC_READERS[countField](text);
    if (sum !== null && count !== null) Object.assign(out, { [sumField]: sum, [countField]: count });
  }
  return out as Partial<EngineSample>;
}

/**
 * One metric: summed over label sets (several engines / DP ranks), or the fullest one for a usage fraction. A label
 * set whose value is NaN, infinite or negative makes the whole metric that value, so the bounds name it rather than a
 * sum hide it.
 */
const readOne =
  (ref: MetricRef, aggregate: 'sum' | 'max'): Reader =>
  (text) => {
    const name = typeof ref === 'string' ? ref : ref.name;
    const where =
      typeof ref === 'string'
        ? undefined
        : (l: Record<string, string>) => Object.entries(ref.labels).every(([k, v]) => l[k] === v);
    const impossible = text.samples.find(
      (s) => s.name === name && (!where || where(s.labels)) && !(Number.isFinite(s.value) && s.value >= 0),
    );
    if (impossible) return impossible.value;
    if (where) return sumMetric(text, name, where);
    return aggregate === 'max' ? maxMetric(text, name) : sumMetric(text, name);
  };

/** Each EngineSample field read from the names the engine modules declare (first present wins, engine by engine). */
const ENGINE_METRIC_READERS = Object.fromEntries(
  FIELDS.map((field) => {
    const readers = ENGINES.flatMap((e) => e.metricNames?.[field] ?? []).map((ref) =>
      readOne(ref, field === 'kvUsage' ? 'max' : 'sum'),
    );
    const read: Reader = (text) => {
      for (const r of readers) {
        const v = r(text);
        if (v !== null) return v;
      }
      return null;
    };
    return [field, read];
  }),
) as Record<Field, Reader>;

/**
 * Maps one parsed /metrics page to an EngineSample (null where the engine does not export the metric); impossible
 * values are left out and named in `rejected` (boundEngineSample).
 */
export function engineSampleFromMetrics(text: PromText, tMs: number): EngineSample {
  const queries = ENGINE_METRIC_READERS.prefixCacheQueriesTotal(text);
  return boundEngineSample({
    tMs,
    running: ENGINE_METRIC_READERS.running(text),
    waiting: ENGINE_METRIC_READERS.waiting(text),
    kvUsage: ENGINE_METRIC_READERS.kvUsage(text),
    preemptionsTotal: ENGINE_METRIC_READERS.preemptionsTotal(text),
    prefixCacheHitsTotal: ENGINE_METRIC_READERS.prefixCacheHitsTotal(text),
    generationTokensTotal: ENGINE_METRIC_READERS.generationTokensTotal(text),
    // Only where the engine reports it: a record without it reads as before.
    ...(queries !== null ? { prefixCacheQueriesTotal: queries } : {}),
    ...histogramPairs(text),
  });
}

/** True when a page carries at least one metric the mapping knows (an impossible value of one counts: it is named). */
function hasEngineMetrics(sample: EngineSample): boolean {
  return Object.entries(sample).some(([k, v]) => k !== 'tMs' && v !== null);
}

/** Whether engine metrics have been seen, and why not. */
export interface EngineStatus {
  available: boolean;
  reason?: string;
}

/** Consecutive scrapes that time out before the source is dropped (one slow answer under load is no reason). */
const TIMEOUTS_TO_DROP = 3;

/** Every metric name the engine modules declare: the only samples of a page that are parsed. */
const KNOWN_NAMES = new Set(
  ENGINES.flatMap((e) => Object.values(e.metricNames ?? {}).flat()).map((ref) =>
    typeof ref === 'string' ? ref : ref.name,
  ),
);

/** Why a scrape means the source must go: a page too big, a line too long, or time-outs in a row; else null. */
function dropCode(error: unknown, timeouts: number): 'oversized' | 'line-too-long' | 'timed-out' | null {
  if (error instanceof BodyTooLargeError) return 'oversized';
  if (error instanceof LineTooLongError) return 'line-too-long';
  return isTimeout(error) && timeouts >= TIMEOUTS_TO_DROP ? 'timed-out' : null;
}

/**
 * Scrapes /metrics every intervalMs; a missing endpoint leaves engine telemetry unavailable, never fails the run.
 * Each scrape is bounded (MAX_SCRAPE_BYTES, a time-out, lines of 64 KiB) and parsed in slices, only for the names the
 * engines declare, so it never holds the event loop for long. A page too big or with too long a line, or time-outs
 * in a row, drop the source for the rest of the run: onDropped says why, in one line.
 */
export function startEngineScraper(options: {
  url: string;
  clock: Clock;
  get: HttpGetText;
  intervalMs?: number;
  onSample: (sample: EngineSample) => void;
  onStatus?: (status: EngineStatus) => void;
  onDropped?: (reason: string, code: 'oversized' | 'line-too-long' | 'timed-out') => void;
}): { stop(): Promise<void>; firstScrape: Promise<EngineStatus> } {
  let resolveFirst: (s: EngineStatus) => void = () => undefined;
  const firstScrape = new Promise<EngineStatus>((resolve) => {
    resolveFirst = resolve;
  });
  let status: EngineStatus = { available: false, reason: `engine metrics not scraped yet (${options.url})` };
  const setStatus = (next: EngineStatus) => {
    status = next;
    options.onStatus?.(status);
    resolveFirst(status);
  };
  const life = new AbortController();
  const timeoutMs = Math.max(2_000, options.intervalMs ?? 1_000);
  let timeouts = 0;
  let dropped = false;
  const drop = (code: 'oversized' | 'line-too-long' | 'timed-out', error: unknown) => {
    dropped = true;
    const what =
      code === 'timed-out'
        ? `gave no complete page within ${timeoutMs / 1000} s ${TIMEOUTS_TO_DROP} times in a row`
        : code === 'oversized'
          ? describeHttpError(error)
          : `sent ${(error as LineTooLongError).message}`;
    const reason = `engine metrics dropped: ${options.url} ${what}; the engine's figures are left out from here on`;
    setStatus({ available: false, reason });
    options.onDropped?.(reason, code);
  };
  const poller = startPoller(options.intervalMs ?? 1_000, async () => {
    if (dropped) return;
    try {
      const res = await options.get(options.url, { timeoutMs, maxBytes: MAX_SCRAPE_BYTES, signal: life.signal });
      const tMs = options.clock.nowMs();
      timeouts = 0;
      if (res.status !== 200) {
        if (!status.available)
          setStatus({
            available: false,
            reason: `engine metrics unavailable: ${options.url} answered HTTP ${res.status}`,
          });
        return;
      }
      if (res.body.length > MAX_SCRAPE_BYTES) throw new BodyTooLargeError(MAX_SCRAPE_BYTES);
      const page = await parsePrometheusTextSliced(res.body, { keep: (name) => KNOWN_NAMES.has(name) });
      if (life.signal.aborted) return;
      const sample = engineSampleFromMetrics(page, tMs);
      if (!hasEngineMetrics(sample)) {
        if (!status.available)
          setStatus({
            available: false,
            reason: `engine metrics unavailable: ${options.url} has no metrics servebench knows (vLLM, SGLang, llama.cpp)`,
          });
        return;
      }
      options.onSample(sample);
      if (!status.available) setStatus({ available: true });
    } catch (error) {
      if (life.signal.aborted) return;
      if (isTimeout(error)) timeouts++;
      const code = dropCode(error, timeouts);
      if (code) return drop(code, error);
      if (!status.available)
        setStatus({
          available: false,
          reason: `engine metrics unavailable: ${options.url} did not answer (${describeHttpError(error)})`,
        });
    }
  });
  return {
    firstScrape,
    async stop() {
      life.abort();
      await poller.stop();
      resolveFirst(status);
    },
  };
}
