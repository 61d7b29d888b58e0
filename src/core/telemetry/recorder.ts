import type { LevelTelemetry, TelemetryIssue } from '../../shared/run-record.js';
import type { EngineKind } from '../../shared/config.js';
import { dcgmUrls, type ClientSample, type EngineSample, type GpuSample } from '../../shared/telemetry.js';
import type { Clock } from '../clock.js';
import { startClientSampler } from './client-sampler.js';
import { startDcgmSource } from './dcgm-source.js';
import { nodeTagger } from './dcgm-nodes.js';
import { startEngineScraper, type EngineStatus } from './engine-metrics.js';
import { createExecaRunner, type CommandRunner } from './exec.js';
import { explainSpread as explain } from './explain-spread.js';
import { undiciGetText, type HttpGetText } from './http-get.js';
import { resolveNvidiaSmi } from './nvidia-smi-binary.js';
import { LOOP_FIELDS, parseLoopLine } from './nvidia-smi-fields.js';
import { startNvidiaSmiLoop, type NvidiaSmiLoop } from './nvidia-smi-loop.js';
import { probeFields } from './nvidia-smi-probe.js';
import { formatGpuProcess, queryGpuInfo, queryGpuProcesses, type GpuInfo } from './nvidia-smi-static.js';
import { isOwnProcess } from './own-processes.js';
import { startPoller, type Poller } from './poller.js';
import { boundGpuSample } from './sample-bounds.js';
import { impossibleValueText, summarizeTelemetry } from './summarize.js';
import { findEpisodes } from './throttle.js';
import type { GpuProcessSnapshot, TelemetryGap, TelemetryRecorder } from './types.js';

/** Options of createTelemetryRecorder; collaborators (exec, fetch) are injectable for tests. */
export interface TelemetryRecorderOptions {
  /** The run's clock: every sample is stamped with it when read, like the requests. */
  clock: Clock;
  /** nvidia-smi to use; else env SERVEBENCH_NVIDIA_SMI, else PATH. */
  nvidiaSmiPath?: string;
  /** DCGM exporters' /metrics URLs, one per node, comma-separated: the GPU source instead of nvidia-smi (remote GPUs). */
  dcgmUrl?: string;
  /** The engine's Prometheus /metrics URL. */
  metricsUrl?: string;
  engine?: EngineKind;
  /** GPU sampling interval (default 500 ms). */
  intervalMs?: number;
  /** Engine /metrics interval (default 1000 ms). */
  engineIntervalMs?: number;
  /** Client self-sampling interval (default 1000 ms); 0 turns it off. */
  clientIntervalMs?: number;
  /** How often to list processes holding GPU memory (default 10 s). */
  processIntervalMs?: number;
  onGpuSample?: (sample: GpuSample) => void;
  onEngineSample?: (sample: EngineSample) => void;
  onClientSample?: (sample: ClientSample) => void;
  /** Runs nvidia-smi (default: execa). */
  exec?: CommandRunner;
  /** GETs /metrics pages (default: undici). */
  fetch?: HttpGetText;
  /** Environment for finding nvidia-smi and for its child (e.g. SERVEBENCH_FAKE_GPU_STATE). */
  env?: NodeJS.ProcessEnv;
  /** pids of the engine under test: they and their children are not "other" GPU processes. */
  ownPids?: () => Iterable<number>;
  /** Parent pid lookup for ownPids (default: /proc). */
  parentPid?: (pid: number) => number | null;
  /** Delay before restarting a dead nvidia-smi loop (default 1 s, doubling to 10 s). */
  restartDelayMs?: number;
  /** Ends whatever telemetry is doing at once (Ctrl-C, SIGTERM): a hung nvidia-smi probe included. */
  signal?: AbortSignal;
  /** A source was dropped, or first sent an impossible value of a field: one line for the run's messages. */
  onIssue?: (issue: TelemetryIssue) => void;
}

/** The recorder plus what the CLI and app show besides levels. */
export interface TelemetryRecorderImpl extends TelemetryRecorder {
  readonly engineStatus: EngineStatus;
  gaps(): TelemetryGap[];
  warnings(): string[];
  processSnapshots(): GpuProcessSnapshot[];
  gpuInfo(): GpuInfo[];
  /** Fields this driver refused (dropped from the query). */
  droppedFields(): string[];
  waitCool(tempC: number, signal?: AbortSignal, options?: { idleUtilPct?: number; timeoutMs?: number }): Promise<void>;
  explainSpread(
    rounds: ReadonlyArray<{ round: number; startMs: number; endMs: number; outputTokPerSec?: number }>,
    roundCv: number | null,
  ): string | null;
}

const within = <T extends { tMs: number }>(xs: readonly T[], from?: number, to?: number): T[] =>
  xs.filter((s) => (from === undefined || s.tMs >= from) && (to === undefined || s.tMs <= to));

/** The recorder's samples and what it knows of its sources, shared by the functions that start and read them. */
interface RecorderState {
  options: TelemetryRecorderOptions;
  clock: Clock;
  runner: CommandRunner;
  get: HttpGetText;
  env: NodeJS.ProcessEnv;
  intervalMs: number;
  gpu: GpuSample[];
  engine: EngineSample[];
  client: ClientSample[];
  snapshots: GpuProcessSnapshot[];
  warnings: string[];
  gpuListeners: Set<() => void>;
  info: GpuInfo[];
  dropped: string[];
  gpuStatus: TelemetryRecorder['gpuStatus'];
  engineStatus: EngineStatus;
  loop: NvidiaSmiLoop | null;
  pollers: Poller[];
  stopClient: (() => void) | null;
  started: Promise<void> | null;
  stopped: boolean;
  // stop() or the caller's signal ends every query and child at once.
  life: AbortController;
  signal: AbortSignal;
  sourceIssues: Array<TelemetryIssue & { tMs: number }>;
  namedFields: Set<string>;
}

function createRecorderState(options: TelemetryRecorderOptions): RecorderState {
  const life = new AbortController();
  return {
    options,
    clock: options.clock,
    runner: options.exec ?? createExecaRunner(),
    get: options.fetch ?? undiciGetText,
    env: options.env ?? process.env,
    intervalMs: options.intervalMs ?? 500,
    gpu: [],
    engine: [],
    client: [],
    snapshots: [],
    warnings: [],
    gpuListeners: new Set<() => void>(),
    info: [],
    dropped: [],
    gpuStatus: { available: false, source: 'unavailable', reason: 'telemetry not started' },
    engineStatus: options.metricsUrl
      ? { available: false, reason: `engine metrics not scraped yet (${options.metricsUrl})` }
      : { available: false, reason: `no engine metrics URL${options.engine ? ` for ${options.engine}` : ''}` },
    loop: null,
    pollers: [],
    stopClient: null,
    started: null,
    stopped: false,
    life,
    signal: options.signal ? AbortSignal.any([life.signal, options.signal]) : life.signal,
    sourceIssues: [],
    namedFields: new Set<string>(),
  };
}

const safe = <T>(fn: ((x: T) => void) | undefined, x: T) => {
  try {
    fn?.(x);
  } catch {
    // a listener's failure must not stop sampling
  }
};

const tell = (st: RecorderState, issue: TelemetryIssue) => safe(st.options.onIssue, issue);

const notifyGpu = (st: RecorderState) => {
  for (const l of [...st.gpuListeners]) l();
};

/** A source dropped mid-run: its issue counts for every level from now on, and the run is told once. */
function dropSource(st: RecorderState, source: TelemetryIssue['source'], code: string, detail: string): void {
  const issue: TelemetryIssue = { source, code, detail };
  st.sourceIssues.push({ ...issue, tMs: st.clock.nowMs() });
  tell(st, issue);
}

/** The first impossible value of each field is told to the run; the level summaries count them all. */
function tellRejected(
  st: RecorderState,
  source: TelemetryIssue['source'],
  sample: { rejected?: Record<string, string> },
): void {
  const name = source === 'gpu' ? `GPU telemetry (${st.options.dcgmUrl ? 'dcgm' : 'nvidia-smi'})` : 'engine /metrics';
  for (const [field, example] of Object.entries(sample.rejected ?? {})) {
    if (st.namedFields.has(`${source}.${field}`)) continue;
    st.namedFields.add(`${source}.${field}`);
    const detail = impossibleValueText(source, name, field, example, 'and is left out wherever it recurs');
    tell(st, { source, code: 'impossible-value', field, example, detail });
  }
}

function addGpu(st: RecorderState, raw: GpuSample): void {
  const s = boundGpuSample(raw);
  if (s.rejected) tellRejected(st, 'gpu', s);
  st.gpu.push(s);
  safe(st.options.onGpuSample, s);
  notifyGpu(st);
}

const maxFor = (st: RecorderState) => (index: number) => st.info.find((g) => g.index === index)?.maxSmClockMhz ?? null;

async function snapshotProcesses(st: RecorderState, binary: string): Promise<void> {
  const res = await queryGpuProcesses(st.runner, binary, st.env, st.signal);
  if (!res.ok) return;
  const own = new Set<number>([process.pid, ...(st.options.ownPids?.() ?? [])]);
  const others = res.processes.filter((p) => !isOwnProcess(p.pid, own, st.options.parentPid));
  st.snapshots.push({ tMs: st.clock.nowMs(), processes: others });
}

async function startNvidiaSmi(st: RecorderState): Promise<void> {
  const { options, runner, env, signal, clock } = st;
  const location = resolveNvidiaSmi(options.nvidiaSmiPath, env);
  if (!location.found) {
    st.gpuStatus = { available: false, source: 'unavailable', reason: location.reason };
    return;
  }
  const probe = await probeFields(runner, location.path, LOOP_FIELDS, env, signal);
  if (!probe.ok) {
    st.gpuStatus = { available: false, source: 'unavailable', reason: probe.reason };
    return;
  }
  if (st.stopped || signal.aborted) return;
  st.dropped = probe.fields.dropped;
  const tMs = clock.nowMs();
  for (const line of probe.lines) {
    const s = parseLoopLine(line, probe.fields, tMs, maxFor(st));
    if (s) addGpu(st, s);
  }
  if (st.stopped) return;
  st.gpuStatus = { available: true, source: 'nvidia-smi' };
  st.loop = startNvidiaSmiLoop({
    runner,
    binary: location.path,
    fields: probe.fields,
    intervalMs: st.intervalMs,
    clock,
    env,
    onSample: (s) => addGpu(st, s),
    fallbackMax: maxFor(st),
    onDropped: (reason) => {
      st.gpuStatus = { available: false, source: 'unavailable', reason };
      dropSource(st, 'gpu', 'flooding', reason);
      notifyGpu(st);
    },
    ...(options.restartDelayMs !== undefined ? { restartDelayMs: options.restartDelayMs } : {}),
  });
  await watchGpuProcesses(st, location.path);
}

// What the GPUs are, who else holds their memory now (a warning), and from then on every processIntervalMs.
async function watchGpuProcesses(st: RecorderState, binary: string): Promise<void> {
  const [facts] = await Promise.all([
    queryGpuInfo(st.runner, binary, st.env, st.signal),
    snapshotProcesses(st, binary),
  ]);
  if (facts.ok) st.info = facts.gpus;
  for (const g of facts.ok ? facts.gpus : []) {
    if (g.rejected)
      st.warnings.push(`nvidia-smi gave GPU ${g.index} facts no GPU has, left out: ${g.rejected.join(', ')}`);
  }
  const others = st.snapshots.at(-1)?.processes ?? [];
  if (others.length) {
    st.warnings.push(
      `other processes hold GPU memory and will distort the benchmark: ${others.map(formatGpuProcess).join(', ')}`,
    );
  }
  const every = st.options.processIntervalMs ?? 10_000;
  let first = true;
  st.pollers.push(
    startPoller(every, async () => {
      if (first) {
        first = false;
        return;
      }
      await snapshotProcesses(st, binary);
    }),
  );
}

// One exporter per node of the server, all scraped from here: every sample on this run's one timeline.
async function startDcgm(st: RecorderState, urls: readonly string[]): Promise<void> {
  const tag = nodeTagger(urls);
  const live = new Set<string>();
  const start = async (url: string): Promise<string | null> => {
    const source = startDcgmSource({
      url,
      clock: st.clock,
      get: st.get,
      intervalMs: st.intervalMs,
      onSample: (sample) => addGpu(st, tag(url, sample)),
      onDropped: (reason, code) => {
        live.delete(url);
        if (live.size === 0) st.gpuStatus = { available: false, source: 'unavailable', reason };
        dropSource(st, 'gpu', code, reason);
        notifyGpu(st);
      },
    });
    st.pollers.push(source);
    const first = await source.firstScrape;
    if (first.ok) {
      live.add(url);
      return null;
    }
    await source.stop();
    return first.reason;
  };
  const failed = (await Promise.all(urls.map(start))).filter((r): r is string => r !== null);
  if (live.size > 0) {
    st.gpuStatus = { available: true, source: 'dcgm' };
    for (const reason of failed) st.warnings.push(`${reason}: that node's GPUs are not in this run's telemetry`);
  } else st.gpuStatus = { available: false, source: 'unavailable', reason: failed.join('; ') };
}

// The client's own sampler and the engine's /metrics scraper, each when asked for.
function startClientAndEngine(st: RecorderState): void {
  const { options, clock } = st;
  if ((options.clientIntervalMs ?? 1_000) > 0) {
    st.stopClient = startClientSampler({
      clock,
      intervalMs: options.clientIntervalMs ?? 1_000,
      onSample: (s) => {
        st.client.push(s);
        safe(options.onClientSample, s);
      },
    }).stop;
  }
  if (options.metricsUrl) {
    const scraper = startEngineScraper({
      url: options.metricsUrl,
      clock,
      get: st.get,
      intervalMs: options.engineIntervalMs ?? 1_000,
      onSample: (s) => {
        if (s.rejected) tellRejected(st, 'engine', s);
        st.engine.push(s);
        safe(options.onEngineSample, s);
      },
      onStatus: (s) => {
        st.engineStatus = s;
      },
      onDropped: (reason, code) => dropSource(st, 'engine', code, reason),
    });
    st.pollers.push(scraper);
  }
}

// Resolves once every GPU's latest sample is at or below tempC and idle, the source dropped, or the time-out passed.
function waitCool(
  st: RecorderState,
  tempC: number,
  signal: AbortSignal | undefined,
  opts: { idleUtilPct?: number; timeoutMs?: number },
): Promise<void> {
  const idleUtil = opts.idleUtilPct ?? 10;
  if (!st.gpuStatus.available || st.stopped) return Promise.resolve();
  const since = st.clock.nowMs();
  return new Promise<void>((resolve, reject) => {
    let timer: NodeJS.Timeout | null = null;
    const done = (error?: unknown) => {
      st.gpuListeners.delete(check);
      signal?.removeEventListener('abort', onAbort);
      if (timer) clearTimeout(timer);
      if (error) reject(error);
      else resolve();
    };
    const onAbort = () => done(signal?.reason ?? new Error('aborted'));
    function check() {
      // A source dropped mid-wait (a flood) will say nothing more: waiting on it would last the full time-out.
      if (st.stopped || !st.gpuStatus.available) return done();
      const latest = new Map<number, GpuSample>();
      for (const s of st.gpu) if (s.tMs >= since) latest.set(s.gpu, s);
      const gpus = new Set(st.gpu.map((s) => s.gpu));
      if (latest.size === 0 || latest.size < gpus.size) return;
      const cool = [...latest.values()].every(
        (s) =>
          (s.tempC === null || s.tempC <= tempC) && (s.class === 'idle' || s.utilPct === null || s.utilPct <= idleUtil),
      );
      if (cool) done();
    }
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    st.gpuListeners.add(check);
    if (opts.timeoutMs !== undefined) timer = setTimeout(() => done(), opts.timeoutMs);
  });
}

/**
 * Samples GPU (nvidia-smi loop, or a DCGM exporter), engine /metrics and the client itself on the
 * run's clock. Missing sources never fail the run: gpuStatus / engineStatus say why.
 */
export function createTelemetryRecorder(options: TelemetryRecorderOptions): TelemetryRecorderImpl {
  const st = createRecorderState(options);
  const { gpu, engine, client, snapshots } = st;
  return {
    get gpuStatus() {
      return st.gpuStatus;
    },
    get engineStatus() {
      return st.engineStatus;
    },
    start() {
      st.started ??= (async () => {
        startClientAndEngine(st);
        if (options.dcgmUrl) await startDcgm(st, dcgmUrls(options.dcgmUrl));
        else await startNvidiaSmi(st);
      })();
      return st.started;
    },
    async stop() {
      st.stopped = true;
      st.life.abort();
      await st.started?.catch(() => undefined);
      st.stopClient?.();
      await Promise.all([st.loop?.stop(), ...st.pollers.map((p) => p.stop())]);
      notifyGpu(st);
    },
    gpuSamples: (from, to) => within(gpu, from, to),
    engineSamples: (from, to) => within(engine, from, to),
    clientSamples: (from, to) => within(client, from, to),
    episodes: () => findEpisodes(gpu),
    gaps: () => st.loop?.gaps() ?? [],
    warnings: () => [...st.warnings],
    processSnapshots: () => snapshots.map((s) => ({ tMs: s.tMs, processes: [...s.processes] })),
    gpuInfo: () => st.info.map((g) => ({ ...g })),
    droppedFields: () => [...st.dropped],
    summarizeWindow(fromMs, toMs, outputTokens): LevelTelemetry {
      const gpuStatus = st.gpuStatus;
      return summarizeTelemetry({
        source: gpuStatus.available ? gpuStatus.source : 'unavailable',
        ...(gpuStatus.available ? {} : { reason: gpuStatus.reason ?? 'no GPU telemetry' }),
        gpuSamples: gpu,
        engineSamples: engine,
        ...(gpuStatus.source === 'nvidia-smi' ? { processSnapshots: snapshots } : {}),
        fromMs,
        toMs,
        outputTokens,
        sourceIssues: st.sourceIssues,
      });
    },
    explainSpread(rounds, roundCv) {
      return explain({
        roundCv,
        rounds,
        gpuSamples: gpu,
        engineSamples: engine,
        clientSamples: client,
        processSnapshots: snapshots,
        gpuAvailable: st.gpuStatus.available,
      });
    },
    waitCool: (tempC, signal, opts = {}) => waitCool(st, tempC, signal, opts),
  };
}
