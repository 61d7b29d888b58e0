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

/**
 * Samples GPU (nvidia-smi loop, or a DCGM exporter), engine /metrics and the client itself on the
 * run's clock. Missing sources never fail the run: gpuStatus / engineStatus say why.
 */
export function createTelemetryRecorder(options: TelemetryRecorderOptions): TelemetryRecorderImpl {
  const clock = options.clock;
  const runner = options.exec ?? createExecaRunner();
  const get = options.fetch ?? undiciGetText;
  const env = options.env ?? process.env;
  const intervalMs = options.intervalMs ?? 500;
  const gpu: GpuSample[] = [];
  const engine: EngineSample[] = [];
  const client: ClientSample[] = [];
  const snapshots: GpuProcessSnapshot[] = [];
  const warnings: string[] = [];
  const gpuListeners = new Set<() => void>();
  let info: GpuInfo[] = [];
  let dropped: string[] = [];
  let gpuStatus: TelemetryRecorder['gpuStatus'] = {
    available: false,
    source: 'unavailable',
    reason: 'telemetry not started',
  };
  let engineStatus: EngineStatus = options.metricsUrl
    ? { available: false, reason: `engine metrics not scraped yet (${options.metricsUrl})` }
    : { available: false, reason: `no engine metrics URL${options.engine ? ` for ${options.engine}` : ''}` };
  let loop: NvidiaSmiLoop | null = null;
  const pollers: Poller[] = [];
  let stopClient: (() => void) | null = null;
  let started: Promise<void> | null = null;
  let stopped = false;
  // stop() or the caller's signal ends every query and child at once.
  const life = new AbortController();
  const signal = options.signal ? AbortSignal.any([life.signal, options.signal]) : life.signal;
  const sourceIssues: Array<TelemetryIssue & { tMs: number }> = [];
  const namedFields = new Set<string>();
  const tell = (issue: TelemetryIssue) => safe(options.onIssue, issue);
  /** A source dropped mid-run: its issue counts for every level from now on, and the run is told once. */
  const dropSource = (source: TelemetryIssue['source'], code: string, detail: string) => {
    const issue: TelemetryIssue = { source, code, detail };
    sourceIssues.push({ ...issue, tMs: clock.nowMs() });
    tell(issue);
  };
  /** The first impossible value of each field is told to the run; the level summaries count them all. */
  const tellRejected = (source: TelemetryIssue['source'], sample: { rejected?: Record<string, string> }) => {
    const name = source === 'gpu' ? `GPU telemetry (${options.dcgmUrl ? 'dcgm' : 'nvidia-smi'})` : 'engine /metrics';
    for (const [field, example] of Object.entries(sample.rejected ?? {})) {
      if (namedFields.has(`${source}.${field}`)) continue;
      namedFields.add(`${source}.${field}`);
      const detail = impossibleValueText(source, name, field, example, 'and is left out wherever it recurs');
      tell({ source, code: 'impossible-value', field, example, detail });
    }
  };

  const safe = <T>(fn: ((x: T) => void) | undefined, x: T) => {
    try {
      fn?.(x);
    } catch {
      // a listener's failure must not stop sampling
    }
  };
  const addGpu = (raw: GpuSample) => {
    const s = boundGpuSample(raw);
    if (s.rejected) tellRejected('gpu', s);
    gpu.push(s);
    safe(options.onGpuSample, s);
    for (const l of [...gpuListeners]) l();
  };
  const maxFor = (index: number) => info.find((g) => g.index === index)?.maxSmClockMhz ?? null;

  const snapshotProcesses = async (binary: string) => {
    const res = await queryGpuProcesses(runner, binary, env, signal);
    if (!res.ok) return;
    const own = new Set<number>([process.pid, ...(options.ownPids?.() ?? [])]);
    const others = res.processes.filter((p) => !isOwnProcess(p.pid, own, options.parentPid));
    snapshots.push({ tMs: clock.nowMs(), processes: others });
  };

  const startNvidiaSmi = async () => {
    const location = resolveNvidiaSmi(options.nvidiaSmiPath, env);
    if (!location.found) {
      gpuStatus = { available: false, source: 'unavailable', reason: location.reason };
      return;
    }
    const probe = await probeFields(runner, location.path, LOOP_FIELDS, env, signal);
    if (!probe.ok) {
      gpuStatus = { available: false, source: 'unavailable', reason: probe.reason };
      return;
    }
    if (stopped || signal.aborted) return;
    dropped = probe.fields.dropped;
    const tMs = clock.nowMs();
    for (const line of probe.lines) {
      const s = parseLoopLine(line, probe.fields, tMs, maxFor);
      if (s) addGpu(s);
    }
    if (stopped) return;
    gpuStatus = { available: true, source: 'nvidia-smi' };
    loop = startNvidiaSmiLoop({
      runner,
      binary: location.path,
      fields: probe.fields,
      intervalMs,
      clock,
      env,
      onSample: addGpu,
      fallbackMax: maxFor,
      onDropped: (reason) => {
        gpuStatus = { available: false, source: 'unavailable', reason };
        dropSource('gpu', 'flooding', reason);
        for (const l of [...gpuListeners]) l();
      },
      ...(options.restartDelayMs !== undefined ? { restartDelayMs: options.restartDelayMs } : {}),
    });
    const [facts] = await Promise.all([
      queryGpuInfo(runner, location.path, env, signal),
      snapshotProcesses(location.path),
    ]);
    if (facts.ok) info = facts.gpus;
    const others = snapshots.at(-1)?.processes ?? [];
    if (others.length) {
      warnings.push(
        `other processes hold GPU memory and will distort the benchmark: ${others.map(formatGpuProcess).join(', ')}`,
      );
    }
    const every = options.processIntervalMs ?? 10_000;
    let first = true;
    pollers.push(
      startPoller(every, async () => {
        if (first) {
          first = false;
          return;
        }
        await snapshotProcesses(location.path);
      }),
    );
  };

  // One exporter per node of the server, all scraped from here: every sample on this run's one timeline.
  const startDcgm = async (urls: readonly string[]) => {
    const tag = nodeTagger(urls);
    const live = new Set<string>();
    const start = async (url: string): Promise<string | null> => {
      const source = startDcgmSource({
        url,
        clock,
        get,
        intervalMs,
        onSample: (sample) => addGpu(tag(url, sample)),
        onDropped: (reason, code) => {
          live.delete(url);
          if (live.size === 0) gpuStatus = { available: false, source: 'unavailable', reason };
          dropSource('gpu', code, reason);
          for (const l of [...gpuListeners]) l();
        },
      });
      pollers.push(source);
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
      gpuStatus = { available: true, source: 'dcgm' };
      for (const reason of failed) warnings.push(`${reason}: that node's GPUs are not in this run's telemetry`);
    } else gpuStatus = { available: false, source: 'unavailable', reason: failed.join('; ') };
  };

  const recorder: TelemetryRecorderImpl = {
    get gpuStatus() {
      return gpuStatus;
    },
    get engineStatus() {
      return engineStatus;
    },
    start() {
      started ??= (async () => {
        if ((options.clientIntervalMs ?? 1_000) > 0) {
          stopClient = startClientSampler({
            clock,
            intervalMs: options.clientIntervalMs ?? 1_000,
            onSample: (s) => {
              client.push(s);
              safe(options.onClientSample, s);
            },
          }).stop;
        }
        if (options.metricsUrl) {
          const scraper = startEngineScraper({
            url: options.metricsUrl,
            clock,
            get,
            intervalMs: options.engineIntervalMs ?? 1_000,
            onSample: (s) => {
              if (s.rejected) tellRejected('engine', s);
              engine.push(s);
              safe(options.onEngineSample, s);
            },
            onStatus: (s) => {
              engineStatus = s;
            },
            onDropped: (reason, code) => dropSource('engine', code, reason),
          });
          pollers.push(scraper);
        }
        if (options.dcgmUrl) await startDcgm(dcgmUrls(options.dcgmUrl));
        else await startNvidiaSmi();
      })();
      return started;
    },
    async stop() {
      stopped = true;
      life.abort();
      await started?.catch(() => undefined);
      stopClient?.();
      await Promise.all([loop?.stop(), ...pollers.map((p) => p.stop())]);
      for (const l of [...gpuListeners]) l();
    },
    gpuSamples: (from, to) => within(gpu, from, to),
    engineSamples: (from, to) => within(engine, from, to),
    clientSamples: (from, to) => within(client, from, to),
    episodes: () => findEpisodes(gpu),
    gaps: () => loop?.gaps() ?? [],
    warnings: () => [...warnings],
    processSnapshots: () => snapshots.map((s) => ({ tMs: s.tMs, processes: [...s.processes] })),
    gpuInfo: () => info.map((g) => ({ ...g })),
    droppedFields: () => [...dropped],
    summarizeWindow(fromMs, toMs, outputTokens): LevelTelemetry {
      return summarizeTelemetry({
        source: gpuStatus.available ? gpuStatus.source : 'unavailable',
        ...(gpuStatus.available ? {} : { reason: gpuStatus.reason ?? 'no GPU telemetry' }),
        gpuSamples: gpu,
        engineSamples: engine,
        ...(gpuStatus.source === 'nvidia-smi' ? { processSnapshots: snapshots } : {}),
        fromMs,
        toMs,
        outputTokens,
        sourceIssues,
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
        gpuAvailable: gpuStatus.available,
      });
    },
    waitCool(tempC, signal, opts = {}) {
      const idleUtil = opts.idleUtilPct ?? 10;
      if (!gpuStatus.available || stopped) return Promise.resolve();
      const since = clock.nowMs();
      return new Promise<void>((resolve, reject) => {
        let timer: NodeJS.Timeout | null = null;
        const done = (error?: unknown) => {
          gpuListeners.delete(check);
          signal?.removeEventListener('abort', onAbort);
          if (timer) clearTimeout(timer);
          if (error) reject(error);
          else resolve();
        };
        const onAbort = () => done(signal?.reason ?? new Error('aborted'));
        function check() {
          // A source dropped mid-wait (a flood) will say nothing more: waiting on it would last the full time-out.
          if (stopped || !gpuStatus.available) return done();
          const latest = new Map<number, GpuSample>();
          for (const s of gpu) if (s.tMs >= since) latest.set(s.gpu, s);
          const gpus = new Set(gpu.map((s) => s.gpu));
          if (latest.size === 0 || latest.size < gpus.size) return;
          const cool = [...latest.values()].every(
            (s) =>
              (s.tempC === null || s.tempC <= tempC) &&
              (s.class === 'idle' || s.utilPct === null || s.utilPct <= idleUtil),
          );
          if (cool) done();
        }
        if (signal?.aborted) return onAbort();
        signal?.addEventListener('abort', onAbort, { once: true });
        gpuListeners.add(check);
        if (opts.timeoutMs !== undefined) timer = setTimeout(() => done(), opts.timeoutMs);
      });
    },
  };
  return recorder;
}
