import { inAppWords } from '../../shared/fields.js';
import type { RunEvent, ServerState } from '../../shared/events.js';
import type { LevelResult, RunRecord, RunStatus } from '../../shared/run-record.js';
import type { EndpointKind } from '../../shared/endpoint-kinds.js';
import type { EngineSample, GpuSample } from '../../shared/telemetry.js';
import {
  createPaceState,
  elapsedSeconds,
  estimateTimeLeft,
  foldPace,
  runClockNow,
  type PaceState,
  type TimeLeft,
} from '../../shared/run-estimate.js';

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
  /** Pooling levels (embeddings, rerank): the kind and inputs per request (no output length, no TTFT). */
  endpoint?: EndpointKind;
  batchSize?: number;
  phase: 'waiting' | 'prompts' | 'cooldown' | 'warmup' | 'measure' | 'done';
  round?: number;
  rounds?: number;
  /** Prompt building: prompts built so far of `promptsTotal` (0 while the length is calibrated). */
  promptsBuilt?: number;
  promptsTotal?: number;
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

interface LogLine {
  kind: 'state' | 'progress' | 'info' | 'warn' | 'error' | 'log';
  text: string;
}

/** Everything the live view shows, folded from the run's events. Plain data: the view decides when to redraw. */
export interface LiveRun {
  runId: string;
  dir: string;
  simulated: boolean;
  totalLevels: number;
  /** Page clock (ms) when run-started arrived: the elapsed time only where the core did not say when the run began. */
  startedAtMs: number;
  /** What the time left and the elapsed time are folded from (the run's own start instant and clock). */
  pace: PaceState;
  /** A sweep of server configurations: the one now measured (0-based) of how many. */
  serverConfig: { index: number; total: number } | null;
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

function paceFrom(event: RunEvent): PaceState {
  const pace = createPaceState();
  foldPace(pace, event);
  return pace;
}

export function createLiveRun(event: Extract<RunEvent, { type: 'run-started' }>, nowMs: number): LiveRun {
  return {
    runId: event.runId,
    dir: event.dir,
    simulated: event.simulated,
    totalLevels: event.totalLevels,
    startedAtMs: nowMs,
    pace: paceFrom(event),
    serverConfig: null,
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
  foldPace(run.pace, event);
  switch (event.type) {
    case 'run-started':
      return;
    case 'server-config':
      run.serverConfig = { index: event.index, total: event.total };
      pushLog(run, { kind: 'state', text: `server configuration ${event.index + 1} of ${event.total}` });
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
        ...(event.endpoint !== undefined && { endpoint: event.endpoint, batchSize: event.batchSize }),
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
      if (event.total !== undefined) {
        level.promptsBuilt = event.done ?? 0;
        level.promptsTotal = event.total;
      }
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

/**
 * Time left at wall instant `wallNowMs`, on the run's own clock (the core sent its origin); a view that does not know
 * that origin counts from the last completion it saw.
 */
export function liveTimeLeft(run: LiveRun, wallNowMs: number): TimeLeft {
  if (run.finished) return { level: 0, run: 0 };
  const lastSeen = Math.max(0, ...run.pace.levels.map((l) => l?.lastEndMs ?? 0));
  return estimateTimeLeft(run.pace, runClockNow(run.pace, wallNowMs) ?? lastSeen);
}

/** Elapsed ms since the run began, from the start instant the core sent (it survives a reload); else since the view saw it start. */
export function liveElapsedMs(run: LiveRun, wallNowMs: number, pageNowMs: number): number {
  const seconds = elapsedSeconds(run.pace, wallNowMs);
  return seconds === null ? pageNowMs - run.startedAtMs : seconds * 1000;
}

const count = (n: number): string => n.toLocaleString('en-US');

/** What a level is doing now, in words ("building prompts 1,200/100,512", "measuring round 2"). */
export function levelPhaseText(level: LiveLevel): string | null {
  switch (level.phase) {
    case 'waiting':
      return 'starting';
    case 'prompts':
      if (level.promptsTotal === undefined) return 'building prompts';
      return level.promptsBuilt
        ? `building prompts ${count(level.promptsBuilt)}/${count(level.promptsTotal)}`
        : `calibrating the prompt length (${count(level.promptsTotal)} prompts to build)`;
    case 'cooldown':
      return 'cooling down';
    case 'warmup':
      return 'warm-up (discarded)';
    case 'measure':
      return `measuring round ${(level.round ?? 0) + 1}`;
    case 'done':
      return null;
  }
}

/** What the run is doing now: the server's start (or a sweep's restart), then the current level's phase. */
export function runPhaseText(run: LiveRun): string {
  if (run.finished) return 'finished';
  const config = run.serverConfig
    ? ` (server configuration ${run.serverConfig.index + 1} of ${run.serverConfig.total})`
    : '';
  const level = run.levels.filter((l) => l && l.phase !== 'done').at(-1);
  const serverBusy = run.serverState !== null && run.serverState !== 'ready';
  if (serverBusy || !level) {
    const state = run.serverState ?? 'checking';
    const words: Record<ServerState, string> = {
      checking: 'checking the server',
      launching: 'launching the server',
      loading: 'waiting for the server to be ready',
      ready: 'server ready',
      stopping: 'stopping the server',
      stopped: 'server stopped',
      failed: 'server failed',
    };
    return `${words[state]}${config}`;
  }
  return `level ${level.index + 1}: ${levelPhaseText(level) ?? 'done'}${config}`;
}
