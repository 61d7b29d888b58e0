import type { GpuSample } from '../../shared/telemetry.js';
import type { Clock } from '../clock.js';
import type { CommandRunner, LineProcess } from './exec.js';
import { parseLoopLine, type ProbedFields } from './nvidia-smi-fields.js';
import type { TelemetryGap } from './types.js';

/** The `-lms` sampling loop: one long-running nvidia-smi for all GPUs, restarted if it dies. */
export interface NvidiaSmiLoop {
  stop(): Promise<void>;
  gaps(): TelemetryGap[];
  readonly restarts: number;
}

/** argv of the loop for a probed field list. */
export function loopArgs(fields: ProbedFields, intervalMs: number): string[] {
  return [
    `--query-gpu=${fields.query.join(',')}`,
    '--format=csv,noheader,nounits',
    '-lms',
    String(Math.max(1, Math.round(intervalMs))),
  ];
}

/**
 * Starts the loop. Each parsed line is stamped with the run clock when it is read. If the child
 * exits while sampling, the gap (last sample .. first sample after the restart) is recorded and the
 * loop is restarted after restartDelayMs, doubling up to maxRestartDelayMs while it keeps failing.
 */
export function startNvidiaSmiLoop(options: {
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
}): NvidiaSmiLoop {
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

  const onLine = (line: string) => {
    if (stopped) return;
    const tMs = options.clock.nowMs();
    const sample = parseLoopLine(line, options.fields, tMs, options.fallbackMax);
    if (!sample) return;
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
    });
    child = current;
    void current.exited.then((result) => {
      if (stopped || child !== current) return;
      const now = options.clock.nowMs();
      if (!openGap) {
        const why = result.stderr.split('\n').find((l) => l.trim()) ?? result.stdout.split('\n').find((l) => l.trim());
        openGap = {
          fromMs: lastSampleMs ?? now,
          toMs: null,
          reason: `nvidia-smi loop exited (code ${result.exitCode ?? 'signal'})${why ? `: ${why.trim()}` : ''}`,
        };
        gaps.push(openGap);
      }
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
      if (stopped) return;
      stopped = true;
      if (timer) clearTimeout(timer);
      if (openGap) openGap.toMs = options.clock.nowMs();
      await child?.stop();
    },
  };
}
