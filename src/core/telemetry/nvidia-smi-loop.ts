import type { GpuSample } from '../../shared/telemetry.js';
import type { Clock } from '../clock.js';
import type { CommandRunner, LineProcess } from './exec.js';
import { parseLoopLine, type ProbedFields } from './nvidia-smi-fields.js';
import type { TelemetryGap } from './types.js';

/** Most the loop may print in FLOOD_WINDOW_MS: hundreds of times what nvidia-smi prints for 64 GPUs at 100 ms. */
const FLOOD_BYTES = 1 << 20;
const FLOOD_WINDOW_MS = 2_000;
/** No sample for this long (or 30 intervals, if longer) while the loop runs: it hangs, and is restarted. */
const HANG_MS = 15_000;

/** The `-lms` sampling loop: one long-running nvidia-smi for all GPUs, restarted if it dies. */
export interface NvidiaSmiLoop {
  stop(): Promise<void>;
  gaps(): TelemetryGap[];
  readonly restarts: number;
}

/** argv of the loop for a probed field list. */
function loopArgs(fields: ProbedFields, intervalMs: number): string[] {
  return [
    `--query-gpu=${fields.query.join(',')}`,
    '--format=csv,noheader,nounits',
    '-lms',
    String(Math.max(1, Math.round(intervalMs))),
  ];
}

/** What the loop runs, how often, and whom it tells. */
export interface NvidiaSmiLoopOptions {
  runner: CommandRunner;
  binary: string;
  fields: ProbedFields;
  intervalMs: number;
  clock: Clock;
  onSample: (sample: GpuSample) => void;
  env?: NodeJS.ProcessEnv;
  fallbackMax?: (gpu: number) => number | null;
  restartDelayMs?: number;
  maxRestartDelayMs?: number;
  /** The loop was stopped for good (a flood): one line saying so. */
  onDropped?: (reason: string) => void;
  hangMs?: number;
}

/** Why the loop's child exited: its code and the first line it printed (stderr first). */
function exitReason(result: { exitCode: number | null; stdout: string; stderr: string }): string {
  const why = result.stderr.split('\n').find((l) => l.trim()) ?? result.stdout.split('\n').find((l) => l.trim());
  return `nvidia-smi loop exited (code ${result.exitCode ?? 'signal'})${why ? `: ${why.trim()}` : ''}`;
}

const FLOOD_REASON = `nvidia-smi printed more than ${FLOOD_BYTES >> 20} MiB within ${FLOOD_WINDOW_MS / 1000} s (it floods its output): stopped, GPU telemetry dropped from here on`;

/** Adds up the bytes the loop prints per FLOOD_WINDOW_MS; true once a window holds more than FLOOD_BYTES. */
function floodMeter(): (bytes: number) => boolean {
  // A rate over wall time, not a measurement: it does not read the run clock.
  let windowStart = performance.now();
  let windowBytes = 0;
  return (bytes) => {
    const wall = performance.now();
    if (wall - windowStart > FLOOD_WINDOW_MS) {
      windowStart = wall;
      windowBytes = 0;
    }
    windowBytes += bytes;
    return windowBytes > FLOOD_BYTES;
  };
}

/**
 * Starts the loop. Each parsed line is stamped with the run clock when it is read. If the child
 * exits while sampling, or prints no sample for HANG_MS, the gap (last sample .. first sample after
 * the restart) is recorded and the loop is restarted after restartDelayMs, doubling up to
 * maxRestartDelayMs while it keeps failing. A child that prints more than FLOOD_BYTES within
 * FLOOD_WINDOW_MS is stopped for good and onDropped says why: what it printed is not read any more.
 */
export function startNvidiaSmiLoop(options: NvidiaSmiLoopOptions): NvidiaSmiLoop {
  const baseDelay = options.restartDelayMs ?? 1_000;
  const maxDelay = options.maxRestartDelayMs ?? 10_000;
  const gaps: TelemetryGap[] = [];
  let delay = baseDelay;
  let stopped = false;
  let restarts = 0;
  let lastSampleMs: number | null = null;
  let openGap: TelemetryGap | null = null;
  let child: LineProcess | null = null;
  let timer: NodeJS.Timeout | null = null;
  let watchdog: NodeJS.Timeout | null = null;
  let hung: string | null = null;
  const flooded = floodMeter();
  const hangMs = options.hangMs ?? Math.max(HANG_MS, 30 * options.intervalMs);

  const watch = (current: LineProcess) => {
    if (watchdog) clearTimeout(watchdog);
    watchdog = setTimeout(() => {
      if (stopped || child !== current) return;
      hung = `nvidia-smi loop gave no sample for ${Math.round(hangMs / 1000)} s (it hangs): restarted`;
      void current.stop();
    }, hangMs);
    watchdog.unref();
  };

  const onBytes = (bytes: number) => {
    if (stopped || !flooded(bytes)) return;
    const now = options.clock.nowMs();
    stopped = true;
    if (watchdog) clearTimeout(watchdog);
    const reason = FLOOD_REASON;
    if (openGap === null) gaps.push({ fromMs: lastSampleMs ?? now, toMs: now, reason });
    void child?.stop();
    options.onDropped?.(reason);
  };

  const onLine = (line: string) => {
    if (stopped) return;
    const tMs = options.clock.nowMs();
    const sample = parseLoopLine(line, options.fields, tMs, options.fallbackMax);
    if (!sample) return;
    if (child) watch(child);
    if (openGap) {
      openGap.toMs = tMs;
      openGap = null;
    }
    delay = baseDelay;
    lastSampleMs = tMs;
    options.onSample(sample);
  };

  const spawn = () => {
    timer = null;
    if (stopped) return;
    const current = options.runner.spawnLines(options.binary, loopArgs(options.fields, options.intervalMs), onLine, {
      env: options.env,
      onBytes,
    });
    child = current;
    watch(current);
    void current.exited.then((result) => {
      if (stopped || child !== current) return;
      const now = options.clock.nowMs();
      if (!openGap) {
        openGap = { fromMs: lastSampleMs ?? now, toMs: null, reason: hung ?? exitReason(result) };
        gaps.push(openGap);
      }
      hung = null;
      restarts++;
      timer = setTimeout(spawn, delay);
      delay = Math.min(delay * 2, maxDelay);
    });
  };

  spawn();
  return {
    get restarts() {
      return restarts;
    },
    gaps: () => gaps.map((g) => ({ ...g })),
    async stop() {
      if (watchdog) clearTimeout(watchdog);
      if (!stopped) {
        stopped = true;
        if (timer) clearTimeout(timer);
        if (openGap) openGap.toMs = options.clock.nowMs();
      }
      // After a flood the child is stopping already: wait for that (stop() is idempotent).
      await child?.stop();
    },
  };
}
