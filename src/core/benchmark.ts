import type { BenchConfig, ServerConfig } from '../shared/config.js';
import type { CapacityResult } from '../shared/capacity.js';
import type { RunEvent } from '../shared/events.js';
import type { RunEnvironment, RunRecord, ServerVariant } from '../shared/run-record.js';
import type { Clock } from './clock.js';
import { createMonoClock } from './clock.js';
import { planLevels, plannedLevel } from './load/level-plan.js';
import type { RunFs } from './runs/run-fs.js';
import type { StartServer } from './servers/types.js';
import { applyVariant } from './servers/variants.js';
import type { ProcReader } from './telemetry/host-pressure.js';
import type { TelemetryRecorder } from './telemetry/types.js';
import { capacityPlan, type CapacityPlan } from './capacity/plan.js';
import { maxCapacityProbes, searchCapacity } from './capacity/search.js';
import type { ActiveRuns } from './run/active-runs.js';
import { RunSession } from './run/run-session.js';
import { ServerSession } from './run/server-session.js';
import { loadWorkload, ownLengths } from './workloads/workload.js';
import { traceReplayText } from './workloads/trace.js';
import type { DistributedHooks } from './distributed/hooks.js';
import type { TelemetryFactoryOptions } from './run/telemetry-options.js';

export { ActiveRuns } from './run/active-runs.js';
export { firstBatchClientError } from './run/level-measure.js';
/** Collaborators of a benchmark run, passed in so tests can use fakes. */
export interface BenchmarkDeps {
  startServer: StartServer;
  createTelemetry?: (options: TelemetryFactoryOptions) => TelemetryRecorder;
  /** Host facts for the record (systeminformation in the CLI); os basics otherwise. */
  hostInfo?: () => Promise<Partial<RunEnvironment['host']>>;
  /** The environment engines inherit, for its token-like secret values (default process.env). */
  env?: NodeJS.ProcessEnv;
  onEvent?: (event: RunEvent) => void;
  signal?: AbortSignal;
  clock?: Clock;
  now?: () => Date;
  /** File operations of the run folder (tests inject a disk that fills up). */
  runFs?: RunFs;
  /** The run this one re-runs (`servebench run --from`), recorded as the record's fromRun. */
  fromRun?: RunRecord['fromRun'];
  /** The host's runs in progress: a forced exit (second Ctrl-C) marks them cancelled through it. */
  activeRuns?: ActiveRuns;
  /** Rank 0 of a distributed run: the workers join, run their shares of every level, and are merged here. */
  distributed?: DistributedHooks;
  /** Reads the host's CPU pressure files (tests drive a busy host with their own); default the real /proc. */
  readProc?: ProcReader;
}

/** The outcome of runBenchmark: the record as written and its folder. */
export interface BenchmarkResult {
  record: RunRecord;
  dir: string;
  /** Set when the run failed: why, in one line. */
  failure?: string;
  /** Exit code the failure deserves: 2 when the user can fix it (server unreachable, bad setting), else 1. */
  exitCode?: number;
}

function flattenVariant(variant: Record<string, unknown>): ServerVariant {
  const out: ServerVariant = {};
  for (const [key, value] of Object.entries(variant)) {
    // An argument list (extra or sim arguments) is one setting: its words, not one key per index.
    if (Array.isArray(value)) out[key] = value.map(String).join(' ');
    else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) out[`${key}.${k}`] = v as string | number | boolean;
    } else if (value !== undefined) {
      out[key] = value as string | number | boolean;
    }
  }
  return out;
}

/** Runs one capacity search per request shape on a started server, recording each in the run. */
async function searchShapes(
  run: RunSession,
  session: ServerSession,
  capacity: CapacityPlan,
  tag: Pick<CapacityResult, 'serverConfigIndex' | 'serverVariant'>,
): Promise<void> {
  const { mode, targets, start, max, planAt } = capacity;
  for (const shape of capacity.shapes) {
    if (session.stopped) return;
    const result = await searchCapacity({
      mode,
      targets,
      start,
      max,
      stopped: () => session.stopped,
      measure: (load) => session.runLevel(planAt(load, shape)),
    });
    await run.addCapacity({ ...result, ...shape, ...tag });
  }
}

/**
 * Runs a whole benchmark: for each server configuration, launch (or attach), calibrate prompts, run every
 * level with warm-up and rounds (or search each shape's capacity), sample telemetry, compute metrics and checks,
 * and keep the run folder up to date after every round so nothing measured is lost to a crash or a cancel.
 */
export async function runBenchmark(config: BenchConfig, deps: BenchmarkDeps): Promise<BenchmarkResult> {
  // Everything a user can get wrong is checked before a run folder exists.
  const capacity = config.findCapacity ? capacityPlan(config) : null;
  // A capacity search sizes the server (and checks limits) for its bound; its levels are chosen as it goes.
  // A prompt file or trace is read (and its settings checked) now; a trace is one level of its own.
  const workload = await loadWorkload(config);
  const plans = capacity
    ? capacity.shapes.map((shape) => capacity.planAt(capacity.max, shape))
    : workload.kind === 'trace'
      ? [workload.plan]
      : planLevels(config);
  const variants = config.serverVariants && config.serverVariants.length > 0 ? config.serverVariants : [{}];
  const serverConfigs = variants.map((variant): ServerConfig => {
    const server = Object.keys(variant).length === 0 ? config.server : applyVariant(config.server, variant);
    return !server.model && config.model ? { ...server, model: config.model } : server;
  });
  const searches = capacity ? capacity.shapes.length * variants.length : 0;
  const run = await RunSession.create(config, {
    clock: deps.clock ?? createMonoClock(),
    now: deps.now ?? (() => new Date()),
    emit: (event) => deps.onEvent?.(event),
    signal: deps.signal,
    runFs: deps.runFs,
    env: deps.env,
    hostInfo: deps.hostInfo,
    fromRun: deps.fromRun,
    activeRuns: deps.activeRuns,
    readProc: deps.readProc,
    totalLevels: capacity ? searches * maxCapacityProbes(capacity.start, capacity.max) : plans.length * variants.length,
    ...(capacity
      ? {}
      : { plannedLevels: variants.flatMap(() => plans.map((p) => plannedLevel(p, ownLengths(workload).output))) }),
    capacitySearches: searches,
  });
  const distributed = deps.distributed;
  const joined = distributed
    ? await distributed.begin(run).then(
        () => true,
        (error: unknown) => (run.failWith(error), false),
      )
    : true;

  // A replay's length is its own, whatever its rate: said before the server starts, as an estimate.
  if (workload.kind === 'trace') run.emit({ type: 'message', severity: 'info', text: traceReplayText(workload.plan) });
  for (const [index, serverConfig] of serverConfigs.entries()) {
    if (run.signal.aborted || !joined || run.failed) break;
    const variant = variants.length > 1 ? flattenVariant(variants[index] as Record<string, unknown>) : undefined;
    const session = new ServerSession(run, {
      serverConfig,
      index,
      variant,
      plans,
      workload,
      startServer: deps.startServer,
      createTelemetry: deps.createTelemetry,
      ...(distributed ? { measure: (input) => distributed.measure(input) } : {}),
    });
    try {
      await session.start();
      if (distributed && session.serverInfo) distributed.serverReady(index, session.serverInfo, plans, variant);
      if (capacity) {
        await searchShapes(run, session, capacity, variant ? { serverConfigIndex: index, serverVariant: variant } : {});
      } else {
        for (const plan of plans) await session.runLevel(plan);
      }
      if (session.clientStopped) break;
      // The exit is known synchronously: a death just before the last level ended still fails the run.
      run.serverFailure ??= session.hasDied();
      if (run.serverFailure) break;
    } catch (error) {
      run.serverFailure ??= session.hasDied();
      // A cancel during start-up or cool-down rejects with an AbortError: that is a cancelled run, not a failure.
      run.failWith(error);
      break;
    } finally {
      await session.close();
    }
  }
  const result = await run.finish();
  await distributed?.end(result.record);
  return result;
}
