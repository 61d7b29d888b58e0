import type { EngineSample } from '../../shared/telemetry.js';
import type { Clock } from '../clock.js';
import { describeHttpError, type HttpGetText } from './http-get.js';
import { startPoller } from './poller.js';
import { maxMetric, parsePrometheusText, sumMetric, type PromText } from './prometheus-parser.js';
import { ENGINES, type MetricRef } from '../servers/engines/index.js';

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
];

/** One metric: summed over label sets (several engines / DP ranks), or the fullest one for a usage fraction. */
const readOne =
  (ref: MetricRef, aggregate: 'sum' | 'max'): Reader =>
  (text) => {
    if (typeof ref !== 'string')
      return sumMetric(text, ref.name, (l) => Object.entries(ref.labels).every(([k, v]) => l[k] === v));
    return aggregate === 'max' ? maxMetric(text, ref) : sumMetric(text, ref);
  };

/** Each EngineSample field read from the names the engine modules declare (first present wins, engine by engine). */
export const ENGINE_METRIC_READERS = Object.fromEntries(
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

/** Maps one parsed /metrics page to an EngineSample (null where the engine does not export the metric). */
export function engineSampleFromMetrics(text: PromText, tMs: number): EngineSample {
  const queries = ENGINE_METRIC_READERS.prefixCacheQueriesTotal(text);
  const decodeSum = ENGINE_METRIC_READERS.requestDecodeSecondsSum(text);
  const decodeCount = ENGINE_METRIC_READERS.requestDecodeCount(text);
  return {
    tMs,
    running: ENGINE_METRIC_READERS.running(text),
    waiting: ENGINE_METRIC_READERS.waiting(text),
    kvUsage: ENGINE_METRIC_READERS.kvUsage(text),
    preemptionsTotal: ENGINE_METRIC_READERS.preemptionsTotal(text),
    prefixCacheHitsTotal: ENGINE_METRIC_READERS.prefixCacheHitsTotal(text),
    generationTokensTotal: ENGINE_METRIC_READERS.generationTokensTotal(text),
    // Only where the engine reports it: a record without it reads as before.
    ...(queries !== null ? { prefixCacheQueriesTotal: queries } : {}),
    ...(decodeSum !== null && decodeCount !== null
      ? { requestDecodeSecondsSum: decodeSum, requestDecodeCount: decodeCount }
      : {}),
  };
}

/** True when a page carries at least one metric the mapping knows. */
export function hasEngineMetrics(sample: EngineSample): boolean {
  return Object.entries(sample).some(([k, v]) => k !== 'tMs' && v !== null);
}

/** Whether engine metrics have been seen, and why not. */
export interface EngineStatus {
  available: boolean;
  reason?: string;
}

/** Scrapes /metrics every intervalMs; a missing endpoint leaves engine telemetry unavailable, never fails the run. */
export function startEngineScraper(options: {
  url: string;
  clock: Clock;
  get: HttpGetText;
  intervalMs?: number;
  onSample: (sample: EngineSample) => void;
  onStatus?: (status: EngineStatus) => void;
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
  const poller = startPoller(options.intervalMs ?? 1_000, async () => {
    try {
      const res = await options.get(options.url, { timeoutMs: Math.max(2_000, options.intervalMs ?? 1_000) });
      const tMs = options.clock.nowMs();
      if (res.status !== 200) {
        if (!status.available)
          setStatus({
            available: false,
            reason: `engine metrics unavailable: ${options.url} answered HTTP ${res.status}`,
          });
        return;
      }
      const sample = engineSampleFromMetrics(parsePrometheusText(res.body), tMs);
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
      await poller.stop();
      resolveFirst(status);
    },
  };
}
