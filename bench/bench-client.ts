// npm run bench:client — servebench's own overhead as a load generator. Prints figures; asserts nothing.
import { mkdtempSync, readFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMonoClock, monoNsToMs } from '../src/core/clock.js';
import { createInThreadExecutor } from '../src/core/load/executor.js';
import type { RequestExecutor } from '../src/core/load/executor.js';
import { FULL_COMPAT, apiPath, buildRequestBody } from '../src/core/load/request-body.js';
import { runClosedLoop } from '../src/core/load/scheduler.js';
import type { ScheduledOutcome } from '../src/core/load/scheduler.js';
import type { RequestSpec } from '../src/core/load/stream-client.js';
import { createWorkerExecutor } from '../src/core/load/worker-executor.js';
import { planLevels } from '../src/core/load/level-plan.js';
import { percentile } from '../src/core/metrics/index.js';
import { BenchConfigSchema } from '../src/shared/config.js';
import { closedLoopInFlight } from '../src/shared/offered-load.js';
import { startSimProcess } from './sim-process.js';
import type { SimProcess } from './sim-process.js';
import { readTruth, recordGcPauses, splitTtft, watchCpu } from './ttft-split.js';
import type { CpuUse } from './ttft-split.js';
import type { TruthRecord } from '../src/core/sim/truth-log.js';
import { showSplit } from './ttft-split-report.js';

const clock = createMonoClock();
const MODEL = 'servebench/sim-llama-8b';
/** Warm-up of the steady-state c=1 level: past the point where V8 still compiles per-request code (--trace-opt). */
const STEADY_WARMUP = 4000;

function specs(count: number, outputLen: number, tag: string): RequestSpec[] {
  return Array.from({ length: count }, (_, i) => ({
    id: i,
    path: apiPath('chat'),
    body: buildRequestBody({
      api: 'chat',
      model: MODEL,
      prompt: `Request ${tag} ${i}: tell a story about the sea`,
      outputLen,
      ignoreEos: true,
      temperature: 0,
      stream: true,
      compat: FULL_COMPAT,
    }),
    timeoutMs: 120_000,
    requestTag: `${tag}-${i}`,
  }));
}

const p = (xs: number[], q: number): number =>
  xs.length
    ? percentile(
        [...xs].sort((a, b) => a - b),
        q,
      )
    : NaN;

interface LevelFigures {
  concurrency: number;
  mode: string;
  requests: number;
  failed: number;
  chunkEventsPerSec: number;
  selfTtftP50Ms: number;
  selfTtftP99Ms: number;
  loopLagP99Ms: number;
  /** Requests really in flight: time-averaged over the judged window, and its time-weighted p5. */
  offeredMean: number;
  offeredP5: number;
  outcomes: ScheduledOutcome[];
}

/** The concurrency these outcomes really held, as the client check measures it (src/shared/offered-load.ts). */
function offered(outcomes: readonly ScheduledOutcome[], concurrency: number): { mean: number; p5: number } {
  const spans = outcomes.map((o) => ({ sendMs: o.sendMs, endMs: o.endMs, ok: o.result.error === null }));
  const m = closedLoopInFlight([spans], concurrency);
  return { mean: m?.mean ?? NaN, p5: m?.p5 ?? NaN };
}

/** The concurrency the server saw, from its truth log (request received to response end), as offered() measures it. */
function serverHeld(
  outcomes: readonly ScheduledOutcome[],
  truth: ReadonlyMap<string, TruthRecord>,
  concurrency: number,
): { mean: number; p5: number } {
  const spans = outcomes.flatMap((o) => {
    const t = truth.get(o.requestTag);
    if (!t?.endNs) return [];
    return [{ sendMs: monoNsToMs(clock, BigInt(t.receivedNs)), endMs: monoNsToMs(clock, BigInt(t.endNs)), ok: true }];
  });
  const m = closedLoopInFlight([spans], concurrency);
  return { mean: m?.mean ?? NaN, p5: m?.p5 ?? NaN };
}

/** "held 15.9 (p5 15)": the concurrency a figure was measured at. */
const heldText = (o: { mean: number; p5: number }): string => `held ${o.mean.toFixed(2)} (p5 ${o.p5})`;

async function level(
  executor: RequestExecutor,
  mode: string,
  concurrency: number,
  count: number,
  outputLen: number,
  tag: string,
): Promise<LevelFigures> {
  const list = specs(count, outputLen, tag);
  executor.startLagWindow();
  const outcomes = await runClosedLoop(list, concurrency, executor, () => undefined);
  const loopLagP99Ms = (await executor.endLagWindow()) ?? NaN;
  const ok = outcomes.filter((o) => o.result.error === null);
  const start = Math.min(...outcomes.map((o) => o.sendMs));
  const end = Math.max(...outcomes.map((o) => o.endMs));
  const events = ok.reduce((s, o) => s + o.result.clientChunkCount, 0);
  const ttft = ok
    .filter((o) => o.result.firstTokenMs !== null)
    .map((o) => (o.result.firstTokenMs as number) - o.sendMs);
  const held = offered(outcomes, concurrency);
  return {
    concurrency,
    mode,
    requests: outcomes.length,
    failed: outcomes.length - ok.length,
    chunkEventsPerSec: events / ((end - start) / 1000),
    selfTtftP50Ms: p(ttft, 50),
    selfTtftP99Ms: p(ttft, 99),
    loopLagP99Ms,
    offeredMean: held.mean,
    offeredP5: held.p5,
    outcomes,
  };
}

function show(f: LevelFigures, ttftLabel = 'self-TTFT'): void {
  console.log(
    `  c=${String(f.concurrency).padStart(4)} ${f.mode.padEnd(10)} ${String(f.requests).padStart(5)} req ${f.failed} failed  ` +
      `${Math.round(f.chunkEventsPerSec).toLocaleString('en-US').padStart(9)} chunk events/s  ${ttftLabel} p50 ${f.selfTtftP50Ms.toFixed(2)} ms p99 ${f.selfTtftP99Ms.toFixed(2)} ms ${heldText({ mean: f.offeredMean, p5: f.offeredP5 })}  loop lag p99 ${f.loopLagP99Ms.toFixed(1)} ms`,
  );
}

/** Self-TTFT (ms) of these outcomes in send order. */
const selfTtft = (outcomes: ScheduledOutcome[]): number[] =>
  [...outcomes]
    .sort((a, b) => a.sendMs - b.sendMs)
    .filter((o) => o.result.error === null && o.result.firstTokenMs !== null)
    .map((o) => (o.result.firstTokenMs as number) - o.sendMs);

/** The c=1 level's measured requests with what the bench watched during them. */
interface WatchedLevel {
  outcomes: ScheduledOutcome[];
  cpu: Map<string, CpuUse>;
  gcPauses: Array<[number, number]>;
}

/**
 * A level as `servebench run` runs it, from a cold client (this runs first in the process, as a run's first level
 * does): a new connection pool, the default warm-up for that concurrency (or `--warmup N`), then the measured
 * requests, of which the first wave is reported on its own. The c=1 level's requests are returned for the split.
 */
async function runLikeLevels(
  sim: SimProcess,
  outputLen: number,
  warmupOverride: number | undefined,
  levels: ReadonlyArray<readonly [number, number]> = [
    [1, 300],
    [256, 1024],
  ],
): Promise<{ figures: number[]; c1: WatchedLevel }> {
  const figures: number[] = [];
  let c1: WatchedLevel | null = null;
  for (const [concurrency, measured] of levels) {
    const plan = planLevels(BenchConfigSchema.parse({ concurrency: [concurrency], warmup: warmupOverride }))[0]!;
    const executor = createInThreadExecutor({ baseUrl: sim.url, clock });
    await runClosedLoop(specs(plan.warmup, outputLen, `rw${concurrency}`), concurrency, executor, () => undefined);
    const watched = concurrency === 1 ? watchCpu(executor, sim.child.pid ?? 0) : null;
    const gc = recordGcPauses(clock);
    const outcomes = await runClosedLoop(
      specs(measured, outputLen, `rm${concurrency}`),
      concurrency,
      watched?.executor ?? executor,
      () => undefined,
    );
    gc.stop();
    watched?.close();
    await executor.close();
    if (watched) c1 = { outcomes, cpu: watched.use, gcPauses: gc.pauses };
    const all = selfTtft(outcomes);
    const wave = all.slice(0, concurrency);
    const rest = all.slice(concurrency);
    console.log(
      `  c=${String(concurrency).padStart(4)} warm-up ${String(plan.warmup).padStart(4)} req, then ${measured}: self-TTFT p50 ${p(all, 50).toFixed(2)} ms p99 ${p(all, 99).toFixed(2)} ms ${heldText(offered(outcomes, concurrency))}` +
        (concurrency > 1
          ? `; first wave (${wave.length}) p50 ${p(wave, 50).toFixed(2)} p99 ${p(wave, 99).toFixed(2)} ms, later waves p50 ${p(rest, 50).toFixed(2)} p99 ${p(rest, 99).toFixed(2)} ms`
          : `; first 20 p50 ${p(all.slice(0, 20), 50).toFixed(2)} max ${Math.max(...all.slice(0, 20)).toFixed(2)} ms, the rest p99 ${p(all.slice(20), 99).toFixed(2)} ms`),
    );
    figures.push(concurrency > 1 ? p(wave, 50) : p(all, 99));
  }
  return { figures, c1: c1! };
}

/** Cores, load average and CPU pressure now: the tail figures below depend on them. */
function machineLoad(): string {
  let pressure = '';
  try {
    const avg10 = /some avg10=([\d.]+)/.exec(readFileSync('/proc/pressure/cpu', 'utf8'))?.[1];
    if (avg10) pressure = `, CPU pressure ${avg10} % (share of the last 10 s in which some task waited for a CPU)`;
  } catch {
    // No pressure stall information on this system.
  }
  return `${cpus().length} cores, load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}${pressure}`;
}

/** Closed-loop levels at c = 1, 16, 64, 256 on one executor, after a warm-up level; a line each. */
async function levelsOn(
  executor: RequestExecutor,
  mode: string,
  outputLen: number,
  tag: string,
  count: (c: number) => number,
): Promise<LevelFigures[]> {
  const out: LevelFigures[] = [];
  await level(executor, 'warm-up', 16, 64, outputLen, `${tag}w`);
  for (const c of [1, 16, 64, 256]) {
    const f = await level(executor, mode, c, count(c), outputLen, `${tag}${c}`);
    show(f, mode.includes('paced') ? 'TTFT' : 'self-TTFT');
    out.push(f);
  }
  await executor.close();
  return out;
}

/** The zero-delay simulator, in-thread and on two workers: the client is all there is. */
async function instantLevels(outputLen: number): Promise<LevelFigures[]> {
  const instant = await startSimProcess(['--profile', 'instant']);
  console.log('instant server (zero-delay simulator):');
  const inThread = createInThreadExecutor({ baseUrl: instant.url, clock });
  const a = await levelsOn(inThread, 'in-thread', outputLen, 'a', (c) => Math.max(64, 4 * c));
  const workers = createWorkerExecutor({ baseUrl: instant.url, clock, workers: 2 });
  const b = await levelsOn(workers, '2 workers', outputLen, 'b', (c) => Math.max(64, 4 * c));
  await instant.stop();
  return [...a, ...b];
}

/**
 * The default simulator profile (7 ms decode steps, an 8B model on an H200): a server that is really working. The
 * simulator's truth log says how many requests it had itself (received to response end), beside the client's count.
 */
async function pacedLevels(): Promise<LevelFigures[]> {
  const truthFile = join(mkdtempSync(join(tmpdir(), 'sb-truth-')), 'truth.jsonl');
  const sim = await startSimProcess(['--truth', truthFile]);
  console.log('paced server (default simulator profile, 64 tokens):');
  const inThread = createInThreadExecutor({ baseUrl: sim.url, clock });
  const a = await levelsOn(inThread, 'paced', 64, 'p', (c) => Math.max(16, 4 * c));
  await sim.stop();
  const truth = readTruth(truthFile);
  for (const f of a) {
    console.log(
      `  c=${String(f.concurrency).padStart(4)} the simulator itself had ${heldText(serverHeld(f.outcomes, truth, f.concurrency))} (request received → response end, its truth log)`,
    );
  }
  return a;
}

/** The concurrency held at each level, for the JSON line. */
function heldFigures(prefix: string, levels: readonly LevelFigures[]): Record<string, number> {
  return Object.fromEntries(levels.map((f) => [`${prefix}C${f.concurrency}Held`, Number(f.offeredMean.toFixed(2))]));
}

async function main(): Promise<void> {
  const outputLen = 256;
  const warmupArg = process.argv.indexOf('--warmup');
  const warmupOverride = warmupArg > 0 ? Number(process.argv[warmupArg + 1]) : undefined;
  console.log(
    `bench:client — node ${process.version}, ${outputLen} tokens per request, chat API, simulator in its own process`,
  );
  console.log(`machine: ${machineLoad()}`);
  if (process.argv.includes('--offered-only')) {
    const instant = await instantLevels(outputLen);
    const paced = await pacedLevels();
    console.log(
      JSON.stringify({
        ...heldFigures(
          'instantInThread',
          instant.filter((f) => f.mode === 'in-thread'),
        ),
        ...heldFigures(
          'instantWorkers',
          instant.filter((f) => f.mode === '2 workers'),
        ),
        ...heldFigures('paced', paced),
      }),
    );
    return;
  }

  // 0. Levels as a run has them, cold client first: does the warm-up warm the client as well as the server?
  const coldTruth = join(mkdtempSync(join(tmpdir(), 'sb-truth-')), 'truth.jsonl');
  const cold = await startSimProcess(['--profile', 'instant', '--truth', coldTruth]);
  console.log(`levels as servebench run plays them (zero-delay simulator, warm-up ${warmupOverride ?? 'default'}):`);
  const { figures, c1 } = await runLikeLevels(cold, outputLen, warmupOverride);
  const [runC1SelfTtftP99Ms, runC256FirstWaveP50Ms] = figures;
  await cold.stop();
  const c1Split = showSplit(
    splitTtft(c1.outcomes, readTruth(coldTruth), clock, c1.cpu, c1.gcPauses),
    c1.outcomes.length,
    'runC1',
  );

  // 0b. The same c=1 level once the client and a fresh simulator have both run thousands of requests: JIT
  // compiling and heap growth, which take CPU from the other process on a small machine, are over by then.
  const steadyTruth = join(mkdtempSync(join(tmpdir(), 'sb-truth-')), 'truth.jsonl');
  const steadySim = await startSimProcess(['--profile', 'instant', '--truth', steadyTruth]);
  console.log(`steady state: c=1 after ${STEADY_WARMUP} warm-up requests (client warm from the levels above):`);
  const steady = await runLikeLevels(steadySim, outputLen, STEADY_WARMUP, [[1, 300]]);
  await steadySim.stop();
  const steadySplit = showSplit(
    splitTtft(steady.c1.outcomes, readTruth(steadyTruth), clock, steady.c1.cpu, steady.c1.gcPauses),
    steady.c1.outcomes.length,
    'steadyC1',
  );
  const levelFigures = {
    runC1SelfTtftP99Ms: Number(runC1SelfTtftP99Ms!.toFixed(2)),
    ...c1Split,
    steadyC1SelfTtftP99Ms: Number(steady.figures[0]!.toFixed(2)),
    ...steadySplit,
  };
  if (process.argv.includes('--levels-only')) {
    console.log(JSON.stringify(levelFigures));
    return;
  }

  // 1. Against a server that answers at once (every millisecond of TTFT is the client's own), then one that paces.
  const results = await instantLevels(outputLen);
  const pacedFigures = await pacedLevels();

  // 2. Concurrent streams held open at once against a paced server with room for all of them.
  const paced = await startSimProcess([
    '--max-num-seqs',
    '100000',
    '--kv-cache-tokens',
    '100000000',
    '--step-base-ms',
    '20',
    '--step-per-seq-ms',
    '0',
    '--prefill-tok-per-s',
    '100000000',
  ]);
  let streams = 0;
  console.log('concurrent streams (paced simulator, 64 tokens, one wave):');
  const streamExec = createInThreadExecutor({ baseUrl: paced.url, clock });
  for (const c of [256, 512, 1024, 2048]) {
    const f = await level(streamExec, 'in-thread', c, c, 64, `s${c}`);
    show(f, 'TTFT (paced)');
    if (f.failed === 0) streams = c;
    else break;
  }
  await streamExec.close();
  await paced.stop();

  // 3. TTFT error against the simulator's truth log (paced streams, default profile).
  const truthFile = join(mkdtempSync(join(tmpdir(), 'sb-truth-')), 'truth.jsonl');
  const truthSim = await startSimProcess(['--truth', truthFile]);
  const truthExec = createInThreadExecutor({ baseUrl: truthSim.url, clock });
  const errors: number[] = [];
  const all: ScheduledOutcome[] = [];
  const byTag = new Map<string, ScheduledOutcome>();
  for (const c of [1, 16, 64]) {
    const list = specs(4 * c, 64, `t${c}`);
    const outcomes = await runClosedLoop(list, c, truthExec, () => undefined);
    for (const o of outcomes) byTag.set(`t${c}-${o.id}`, o);
    all.push(...outcomes);
  }
  await truthExec.close();
  await truthSim.stop();
  for (const [tag, t] of readTruth(truthFile)) {
    const o = byTag.get(tag);
    if (!o || t.firstTokenNs === null || o.result.firstTokenMs === null) continue;
    errors.push(Math.abs(o.result.firstTokenMs - monoNsToMs(clock, BigInt(t.firstTokenNs))));
  }
  const ttftErrorP99 = p(errors, 99);
  console.log(
    `TTFT error vs truth log (c=1,16,64; ${errors.length} requests matched): p50 ${p(errors, 50).toFixed(3)} ms, p99 ${ttftErrorP99.toFixed(3)} ms`,
  );

  const at256 = results.filter((r) => r.concurrency === 256);
  const best256 = at256.reduce((a, b) => (b.selfTtftP50Ms < a.selfTtftP50Ms ? b : a));
  const summary = {
    ...levelFigures,
    ...heldFigures(
      'instantInThread',
      results.filter((f) => f.mode === 'in-thread'),
    ),
    ...heldFigures(
      'instantWorkers',
      results.filter((f) => f.mode === '2 workers'),
    ),
    ...heldFigures('paced', pacedFigures),
    runC256FirstWaveP50Ms: Number(runC256FirstWaveP50Ms!.toFixed(2)),
    streams,
    chunkEventsPerSec: Math.round(Math.max(...results.map((r) => r.chunkEventsPerSec))),
    selfTtftP50MsAt256: Number(best256.selfTtftP50Ms.toFixed(2)),
    loopLagP99Ms: Number(
      Math.max(...results.filter((r) => r.mode === 'in-thread').map((r) => r.loopLagP99Ms)).toFixed(2),
    ),
    ttftErrorP99Ms: Number(ttftErrorP99.toFixed(3)),
  };
  console.log(JSON.stringify(summary));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
