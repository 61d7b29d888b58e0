import type { GpuSample } from '../../shared/telemetry.js';
import type { Clock } from '../clock.js';
import { BodyTooLargeError, describeHttpError, MAX_SCRAPE_BYTES, type HttpGetText } from './http-get.js';
import { startPoller } from './poller.js';
import { LineTooLongError, parsePrometheusTextSliced, type PromText } from './prometheus-parser.js';
import { classifyThrottle } from './throttle.js';

const THROTTLE_NAMES = ['DCGM_FI_DEV_CLOCK_THROTTLE_REASONS', 'DCGM_FI_DEV_CLOCKS_EVENT_REASONS'];

/**
 * Maps a DCGM exporter page to one GpuSample per `gpu` label. Fields the exporter does not
 * export stay null (the default counters have no max SM clock and no throttle mask).
 */
export function gpuSamplesFromDcgm(text: PromText, tMs: number): GpuSample[] {
  const perGpu = new Map<number, Map<string, number>>();
  for (const s of text.samples) {
    if (!s.name.startsWith('DCGM_FI_DEV_')) continue;
    const gpu = Number(s.labels.gpu);
    if (s.labels.gpu === undefined || !Number.isInteger(gpu) || Number.isNaN(s.value)) continue;
    const fields = perGpu.get(gpu) ?? new Map<string, number>();
    // MIG instances repeat device-level fields; the first reading per device is kept.
    if (!fields.has(s.name)) fields.set(s.name, s.value);
    perGpu.set(gpu, fields);
  }
  const samples: GpuSample[] = [];
  for (const [gpu, f] of [...perGpu.entries()].sort((a, b) => a[0] - b[0])) {
    const get = (...names: string[]): number | null => {
      for (const n of names) {
        const v = f.get(n);
        if (v !== undefined) return v;
      }
      return null;
    };
    const maskRaw = get(...THROTTLE_NAMES);
    const throttleMask = maskRaw === null ? null : Math.trunc(maskRaw);
    const used = get('DCGM_FI_DEV_FB_USED');
    const free = get('DCGM_FI_DEV_FB_FREE');
    const reserved = get('DCGM_FI_DEV_FB_RESERVED') ?? 0;
    const memTemp = get('DCGM_FI_DEV_MEMORY_TEMP');
    const pstate = get('DCGM_FI_DEV_PSTATE');
    samples.push({
      tMs,
      gpu,
      smClockMhz: get('DCGM_FI_DEV_SM_CLOCK'),
      maxSmClockMhz: get('DCGM_FI_DEV_MAX_SM_CLOCK'),
      memClockMhz: get('DCGM_FI_DEV_MEM_CLOCK'),
      tempC: get('DCGM_FI_DEV_GPU_TEMP'),
      // DCGM reports 0 where the board has no memory sensor: a working GPU is never at 0 °C.
      memTempC: memTemp !== null && memTemp > 0 ? memTemp : null,
      powerW: get('DCGM_FI_DEV_POWER_USAGE'),
      powerLimitW: get('DCGM_FI_DEV_ENFORCED_POWER_LIMIT', 'DCGM_FI_DEV_POWER_MGMT_LIMIT'),
      utilPct: get('DCGM_FI_DEV_GPU_UTIL'),
      memUsedMiB: used,
      memTotalMiB: get('DCGM_FI_DEV_FB_TOTAL') ?? (used !== null && free !== null ? used + free + reserved : null),
      pstate: pstate === null ? null : `P${pstate}`,
      throttleMask,
      class: classifyThrottle(throttleMask),
    });
  }
  return samples;
}

/** A DCGM page parsed in slices, its DCGM_FI_* samples only (bounded as every page from outside). */
export function parseDcgmPage(body: string): Promise<PromText> {
  if (body.length > MAX_SCRAPE_BYTES) return Promise.reject(new BodyTooLargeError(MAX_SCRAPE_BYTES));
  return parsePrometheusTextSliced(body, { keep: (name) => name.startsWith('DCGM_FI_') });
}

/**
 * Polls a DCGM exporter URL as the GPU source (remote GPUs in attach mode), each page bounded and parsed in slices.
 * A page too big or with too long a line drops the source for the rest of the run (onDropped says why).
 */
export function startDcgmSource(options: {
  url: string;
  clock: Clock;
  get: HttpGetText;
  intervalMs: number;
  onSample: (sample: GpuSample) => void;
  onError?: (reason: string) => void;
  onDropped?: (reason: string, code: 'oversized' | 'line-too-long') => void;
}): { stop(): Promise<void>; firstScrape: Promise<{ ok: true } | { ok: false; reason: string }> } {
  let resolveFirst: (r: { ok: true } | { ok: false; reason: string }) => void = () => undefined;
  const firstScrape = new Promise<{ ok: true } | { ok: false; reason: string }>((resolve) => {
    resolveFirst = resolve;
  });
  const life = new AbortController();
  let dropped = false;
  const poller = startPoller(options.intervalMs, async () => {
    if (dropped) return;
    try {
      const res = await options.get(options.url, {
        timeoutMs: Math.max(2_000, options.intervalMs * 2),
        maxBytes: MAX_SCRAPE_BYTES,
        signal: life.signal,
      });
      const tMs = options.clock.nowMs();
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
      const samples = gpuSamplesFromDcgm(await parseDcgmPage(res.body), tMs);
      if (life.signal.aborted) return;
      if (samples.length === 0) throw new Error('no DCGM_FI_DEV_* metrics with a gpu label');
      for (const s of samples) options.onSample(s);
      resolveFirst({ ok: true });
    } catch (error) {
      if (life.signal.aborted) return;
      const reason = `DCGM exporter at ${options.url} gave no GPU metrics (${describeHttpError(error)}); check --dcgm-url`;
      const code =
        error instanceof BodyTooLargeError ? 'oversized' : error instanceof LineTooLongError ? 'line-too-long' : null;
      if (code) {
        dropped = true;
        options.onDropped?.(`GPU telemetry dropped: ${reason}`, code);
      }
      options.onError?.(reason);
      resolveFirst({ ok: false, reason });
    }
  });
  return {
    firstScrape,
    async stop() {
      life.abort();
      await poller.stop();
      resolveFirst({ ok: false, reason: 'stopped before the first scrape' });
    },
  };
}
