import type { BenchConfig } from '../../shared/config.js';
import { runBenchmark, type BenchmarkDeps, type BenchmarkResult } from '../benchmark.js';
import { createMonoClock } from '../clock.js';
import { SERVEBENCH_VERSION } from '../version.js';
import { Coordinator } from './coordinator.js';
import type { DistributedIdentity } from './environment.js';
import { Rank0 } from './rank0.js';
import { configDigest, runWorker } from './worker.js';

/** A distributed run as asked: this process's place in it, the join and barrier time-out, the shared token. */
export interface DistributedRunOptions {
  identity: DistributedIdentity;
  timeoutMs: number;
  token?: string;
}

/**
 * Runs this process's part of a distributed run: rank 0 hosts the rendezvous and runs the benchmark with every worker
 * (writing the one run folder); any other rank joins it and runs its shares. One clock serves the run and the pings.
 */
export async function runDistributed(
  config: BenchConfig,
  deps: BenchmarkDeps,
  options: DistributedRunOptions,
): Promise<BenchmarkResult> {
  const clock = deps.clock ?? createMonoClock();
  const { identity } = options;
  if (identity.rank !== 0) {
    return runWorker(
      config,
      { ...deps, clock },
      { identity, connectTimeoutMs: options.timeoutMs, token: options.token },
    );
  }
  const coordinator = await Coordinator.listen({
    port: identity.coordinator.port,
    worldSize: identity.worldSize,
    version: SERVEBENCH_VERSION,
    configDigest: configDigest(config),
    token: options.token,
    clock,
    timeoutMs: options.timeoutMs,
  });
  try {
    return await runBenchmark(config, { ...deps, clock, distributed: new Rank0(coordinator, identity) });
  } finally {
    // Closed already after a run; before one (a setting refused), the waiting workers learn it now.
    await coordinator.close({ type: 'end', status: 'failed', reason: 'rank 0 stopped before the run began' });
  }
}
