import type { GpuSample } from '../../shared/telemetry.js';
import type { Clock } from '../clock.js';
import { describeHttpError, type HttpGetText } from './http-get.js';
import { startPoller } from './poller.js';
import { parsePrometheusText, type PromText } from './prometheus-parser.js';
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

/** Polls a DCGM exporter URL as the GPU source (remote GPUs in attach mode). */
export function startDcgmSource(options: {
  url: string;
  clock: Clock;
  get: HttpGetText;
  intervalMs: number;
  onSample: (sample: GpuSample) => void;
  onError?: (reason: string) => void;
}): { stop(): Promise<void>; firstScrape: Promise<{ ok: true } | { ok: false; reason: string }> } {
  let resolveFirst: (r: { ok: true } | { ok: false; reason: string }) => void = () => undefined;
  const firstScrape = new Promise<{ ok: true } | { ok: false; reason: string }>((resolve) => {
    resolveFirst = resolve;
  });
  const poller = startPoller(options.intervalMs, async () => {
    try {
      const res = await options.get(options.url, { timeoutMs: Math.max(2_000, options.intervalMs * 2) });
      const tMs = options.clock.nowMs();
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
      const samples = gpuSamplesFromDcgm(parsePrometheusText(res.body), tMs);
      if (samples.length === 0) throw new Error('no DCGM_FI_DEV_* metrics with a gpu label');
      for (const s of samples) options.onSample(s);
      resolveFirst({ ok: true });
    } catch (error) {
      const reason = `DCGM exporter at ${options.url} gave no GPU metrics (${describeHttpError(error)}); check --dcgm-url`;
      options.onError?.(reason);
      resolveFirst({ ok: false, reason });
    }
  });
  return {
    firstScrape,
    async stop() {
      await poller.stop();
      resolveFirst({ ok: false, reason: 'stopped before the first scrape' });
    },
  };
}
