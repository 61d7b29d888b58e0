import { inAppWords } from '../../shared/fields.js';
import type { RunEvent, ServerState } from '../../shared/events.js';
import type { LevelResult, RunRecord, RunStatus } from '../../shared/run-record.js';
import type { EngineSample, GpuSample } from '../../shared/telemetry.js';

/** One level as it runs. */
export interface LiveLevel {
  index: number;
  concurrency: number;
  rate?: number;
  burst?: number;
  inputLen: number;
  outputLen: number;
  /** Each request's own length from a prompt file (inputLen/outputLen are then not what was sent). */
  inputFromFile?: boolean;
  outputFromFile?: boolean;
  phase: 'waiting' | 'prompts' | 'cooldown' | 'warmup' | 'measure' | 'done';
  round?: number;
  rounds?: number;
  done: number;
  total: number;
  failed: number;
  result?: LevelResult;
}

/** A finished request, placed when it ended on the run's clock (the GPU samples' axis). */
export interface LivePoint {
  /** ms after the run's clock origin (the event's endMs). */
  tMs: number;
  levelIndex: number;
  /** Round number, -1 for warm-up. */
  round: number;
  warmup: boolean;
  ok: boolean;
  ttftMs: number | null;
  e2eMs: number | null;
  scheduledMs?: number;
  conversation?: number;
}

export interface LogLine {
  kind: 'state' | 'progress' | 'info' | 'warn' | 'error' | 'log';
  text: string;
}

/** Everything the live view shows, folded from the run's events. Plain data: the view decides when to redraw. */
export interface LiveRun {
  runId: string;
  dir: string;
  simulated: boolean;
  totalLevels: number;
  /** Page clock (ms) when run-started arrived: only for the elapsed-time display. */
  startedAtMs: number;
  serverState: ServerState | null;
  serverDetail: string;
  levels: LiveLevel[];
  points: LivePoint[];
  gpu: GpuSample[];
  engine: EngineSample[];
  log: LogLine[];
  finished: { status: RunStatus; record: RunRecord } | null;
}

const LOG_LIMIT = 400;

export function createLiveRun(event: Extract<RunEvent, { type: 'run-started' }>, nowMs: number): LiveRun {
  return {
    runId: event.runId,
    dir: event.dir,
    simulated: event.simulated,
    totalLevels: event.totalLevels,
    startedAtMs: nowMs,
    serverState: null,
    serverDetail: '',
    levels: [],
    points: [],
    gpu: [],
    engine: [],
    log: [],
    finished: null,
  };
}

function pushLog(run: LiveRun, line: LogLine): void {
  run.log.push(line);
  if (run.log.length > LOG_LIMIT) run.log.splice(0, run.log.length - LOG_LIMIT);
}

/** Folds one event into the live run (mutates it). Times come from the events (the run's clock). */
export function applyEvent(run: LiveRun, event: RunEvent): void {
  switch (event.type) {
    case 'run-started':
      return;
    case 'server-state':
      run.serverState = event.state;
      // servebench's own lines name settings by their flags; the app names them by its fields' labels.
      run.serverDetail = inAppWords(event.detail ?? '');
      pushLog(run, { kind: 'state', text: `server ${event.state}${run.serverDetail ? `: ${run.serverDetail}` : ''}` });
      return;
    case 'server-progress':
      pushLog(run, { kind: 'progress', text: event.message });
      return;
    case 'server-log':
      pushLog(run, { kind: 'log', text: event.line });
      return;
    case 'message':
      pushLog(run, { kind: event.severity, text: inAppWords(event.text) });
      return;
    case 'level-started':
      run.levels[event.levelIndex] = {
        index: event.levelIndex,
        concurrency: event.concurrency,
        rate: event.rate,
        burst: event.burst,
        inputLen: event.inputLen,
        outputLen: event.outputLen,
        inputFromFile: event.inputFromFile,
        outputFromFile: event.outputFromFile,
        phase: 'waiting',
        done: 0,
        total: event.warmupRequests + event.measuredRequests,
        failed: 0,
      };
      return;
    case 'phase': {
      const level = run.levels[event.levelIndex];
      if (!level) return;
      level.phase = event.phase;
      level.round = event.round;
      return;
    }
    case 'request-done': {
      const level = run.levels[event.levelIndex];
      if (level) {
        level.done = event.done;
        level.total = event.total;
        // The running count, where the event carries it: a busy run's viewer gets only some of these events.
        level.failed = event.failed ?? level.failed + (event.ok ? 0 : 1);
      }
      run.points.push({
        tMs: event.endMs,
        levelIndex: event.levelIndex,
        round: event.round,
        warmup: event.round < 0,
        ok: event.ok,
        ttftMs: event.ttftMs,
        e2eMs: event.e2eMs,
        ...(event.scheduledMs !== undefined ? { scheduledMs: event.scheduledMs } : {}),
        ...(event.conversation !== undefined ? { conversation: event.conversation } : {}),
      });
      return;
    }
    case 'level-finished': {
      const level = run.levels[event.levelIndex];
      if (level) {
        level.phase = 'done';
        level.result = event.level;
        level.done = level.total;
      }
      return;
    }
    case 'gpu-sample':
      run.gpu.push(event.sample);
      return;
    case 'engine-sample':
      run.engine.push(event.sample);
      return;
    case 'run-finished':
      run.finished = { status: event.status, record: event.record };
      for (const level of run.levels) if (level.phase !== 'done') level.phase = 'done';
      return;
  }
}

/** A live point's time on the run's clock, in seconds (the GPU and engine samples' axis). */
export function pointTimeS(point: LivePoint): number {
  return point.tMs / 1000;
}
