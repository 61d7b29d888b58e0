import type { EngineSample } from '../../shared/telemetry.js';
import type { Clock } from '../clock.js';
import { describeHttpError, type HttpGetText } from './http-get.js';
import { startPoller } from './poller.js';
import { maxMetric, parsePrometheusText, sumMetric, type PromText } from './prometheus-parser.js';

type Reader = (text: PromText) => number | null;

const sum =
  (...names: string[]): Reader =>
  (text) => {
    for (const name of names) {
      const v = sumMetric(text, name);
      if (v !== null) return v;
    }
    return null;
  };
const max =
  (...names: string[]): Reader =>
  (text) => {
    for (const name of names) {
      const v = maxMetric(text, name);
      if (v !== null) return v;
    }
    return null;
  };
const first =
  (...readers: Reader[]): Reader =>
  (text) => {
    for (const read of readers) {
      const v = read(text);
      if (v !== null) return v;
    }
    return null;
  };

/**
 * vLLM (v1 and older) and SGLang metric names mapped onto EngineSample fields. Counts are summed
 * over label sets (several engines / DP ranks); the KV usage fraction takes the fullest one.
 */
export const ENGINE_METRIC_READERS: Record<Exclude<keyof EngineSample, 'tMs'>, Reader> = {
  running: first(sum('vllm:num_requests_running'), sum('sglang:num_running_reqs')),
  waiting: first(sum('vllm:num_requests_waiting'), sum('sglang:num_queue_reqs')),
  kvUsage: first(max('vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc'), max('sglang:token_usage')),
  preemptionsTotal: first(
    sum('vllm:num_preemptions_total', 'vllm:num_preemptions'),
    sum('sglang:num_retracted_requests_total'),
  ),
  prefixCacheHitsTotal: first(
    sum('vllm:prefix_cache_hits_total', 'vllm:gpu_prefix_cache_hits_total'),
    sum('sglang:cached_tokens_total'),
    (text) => sumMetric(text, 'sglang:realtime_tokens_total', (l) => l.mode === 'prefill_cache'),
  ),
  generationTokensTotal: first(sum('vllm:generation_tokens_total'), sum('sglang:generation_tokens_total')),
};

/** Maps one parsed /metrics page to an EngineSample (null where the engine does not export the metric). */
export function engineSampleFromMetrics(text: PromText, tMs: number): EngineSample {
  return {
    tMs,
    running: ENGINE_METRIC_READERS.running(text),
    waiting: ENGINE_METRIC_READERS.waiting(text),
    kvUsage: ENGINE_METRIC_READERS.kvUsage(text),
    preemptionsTotal: ENGINE_METRIC_READERS.preemptionsTotal(text),
    prefixCacheHitsTotal: ENGINE_METRIC_READERS.prefixCacheHitsTotal(text),
    generationTokensTotal: ENGINE_METRIC_READERS.generationTokensTotal(text),
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
            reason: `engine metrics unavailable: ${options.url} has no vLLM or SGLang metrics`,
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
