import type { ThrottleClass } from './run-record.js';

/** One nvidia-smi (or DCGM) reading for one GPU; null = the driver gave no value. Never 0 for unknown. */
export interface GpuSample {
  /** ms after the run's clock origin (same clock as request records). */
  tMs: number;
  gpu: number;
  smClockMhz: number | null;
  maxSmClockMhz: number | null;
  memClockMhz: number | null;
  tempC: number | null;
  memTempC: number | null;
  powerW: number | null;
  powerLimitW: number | null;
  utilPct: number | null;
  memUsedMiB: number | null;
  memTotalMiB: number | null;
  pstate: string | null;
  /** clocks_throttle_reasons.active / clocks_event_reasons.active bit mask. */
  throttleMask: number | null;
  class: ThrottleClass;
  /** With several DCGM exporters: the node (exporter host:port) it was read from, and its index on that node. */
  node?: string;
  nodeGpu?: number;
  /** Values read but impossible (NaN, out of physical range), left out above: field -> the value as read. */
  rejected?: Record<string, string>;
}

/** One scrape of the engine's Prometheus /metrics. */
export interface EngineSample {
  tMs: number;
  running: number | null;
  waiting: number | null;
  kvUsage: number | null;
  preemptionsTotal: number | null;
  prefixCacheHitsTotal: number | null;
  /** Prompt tokens looked up in the prefix cache (the hit rate's denominator); absent where the engine has none. */
  prefixCacheQueriesTotal?: number | null;
  generationTokensTotal: number | null;
  /**
   * The engine's per-request decode-time histogram (vLLM's request_decode_time_seconds, first to last token):
   * its running sum (s) and count; absent where the engine has none.
   */
  requestDecodeSecondsSum?: number | null;
  requestDecodeCount?: number | null;
  /**
   * The engine's per-request queue-time, prefill-time and TTFT histograms (vLLM's request_queue_time_seconds,
   * request_prefill_time_seconds, time_to_first_token_seconds; SGLang's queue_time_seconds and
   * time_to_first_token_seconds): running sums (s) and counts; absent where the engine has none.
   */
  requestQueueSecondsSum?: number | null;
  requestQueueCount?: number | null;
  requestPrefillSecondsSum?: number | null;
  requestPrefillCount?: number | null;
  ttftSecondsSum?: number | null;
  ttftCount?: number | null;
  /** Values read but impossible (NaN, negative, a usage above 1, hits above queries), left out: field -> as read. */
  rejected?: Record<string, string>;
}

/** A contiguous stretch of thermal or hardware slowdown. */
export interface ThrottleEpisode {
  gpu: number;
  kind: 'thermal' | 'hw-slowdown' | 'power-cap';
  startMs: number;
  endMs: number;
  lowestClockRatio: number | null;
}

/** Client-side health: the load generator must not be the bottleneck. */
export interface ClientSample {
  tMs: number;
  loopLagMs: number;
  cpuPct: number;
}

/** The DCGM exporter URLs of a --dcgm-url value: one per node of the server, comma-separated. */
export function dcgmUrls(value: string): string[] {
  return value
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u.length > 0);
}
