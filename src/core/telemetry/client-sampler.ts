import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { ClientSample } from '../../shared/telemetry.js';
import type { Clock } from '../clock.js';

const RESOLUTION_MS = 10;

/**
 * Samples the client's own health every intervalMs: the worst event-loop lag in the interval
 * (beyond the timer's resolution) and this process's CPU % (user+system over wall time; can exceed
 * 100 with worker threads). A busy client skews its own timings.
 */
export function startClientSampler(options: {
  clock: Clock;
  intervalMs?: number;
  onSample: (sample: ClientSample) => void;
}): { stop(): void } {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  let lastCpu = process.cpuUsage();
  let lastMs = options.clock.nowMs();
  const timer = setInterval(() => {
    const tMs = options.clock.nowMs();
    const cpu = process.cpuUsage(lastCpu);
    const elapsedMs = tMs - lastMs;
    const maxNs = histogram.count > 0 ? histogram.max : 0;
    options.onSample({
      tMs,
      loopLagMs: Math.max(0, maxNs / 1e6 - RESOLUTION_MS),
      cpuPct: elapsedMs > 0 ? ((cpu.user + cpu.system) / 1e3 / elapsedMs) * 100 : 0,
    });
    histogram.reset();
    lastCpu = process.cpuUsage();
    lastMs = tMs;
  }, options.intervalMs ?? 1_000);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      histogram.disable();
    },
  };
}
