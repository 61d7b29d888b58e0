// npm run bench:precision — what --precision saves against the fixed plan: requests and measured seconds not spent.
// The simulator's engine (the default profile, as the demo serves it) runs on a virtual clock, closed loop, each
// level planned as `servebench run` plans it (planLevels); the same seed gives the same rounds with and without
// --precision (rounds are run one after another), so the saving is the fixed plan's rounds the rule did not run.
// Every figure is SIMULATED: engine time, not a GPU's, and no HTTP client in the loop.
import { planLevels, type LevelPlan } from '../src/core/load/level-plan.js';
import { precisionWatch } from '../src/core/run/precision-watch.js';
import { createRng } from '../src/core/rng.js';
import { DEFAULT_PROFILE_NAME, loadBundledProfile } from '../src/core/sim/index.js';
import { Scheduler } from '../src/core/sim/scheduler.js';
import type { SimProfile } from '../src/core/sim/profile.js';
import { BenchConfigSchema } from '../src/shared/config.js';
import { precisionSaved } from '../src/shared/precision.js';
import type { RequestRecord } from '../src/shared/request-record.js';
import { makeRecord } from '../test/core/metrics/make-record.js';
import { VirtualClock } from '../test/core/sim/virtual-clock.js';

const SEEDS = Number(process.env.BENCH_SEEDS ?? 20);

/** A scenario: the run's settings as the CLI takes them (camelCase config keys). */
interface Scenario {
  name: string;
  config: Record<string, unknown>;
}

const SCENARIOS: Scenario[] = [
  { name: 'demo --precision 5%', config: { precision: '5%' } },
  { name: 'demo --rounds 8 --precision 5%', config: { rounds: 8, precision: '5%' } },
  {
    name: 'demo --rounds 8 --requests-per-round 100 --precision 5%',
    config: { rounds: 8, requestsPerRound: 100, precision: '5%' },
  },
  {
    name: 'sweep c=1,2,4,8,16 --rounds 8 --requests-per-round 100 --precision 5%',
    config: { concurrency: [1, 2, 4, 8, 16], rounds: 8, requestsPerRound: 100, precision: '5%' },
  },
  {
    name: 'sweep c=1,4,16,64,256 --rounds 8 --precision 5%',
    config: { concurrency: [1, 4, 16, 64, 256], rounds: 8, precision: '5%' },
  },
  {
    name: 'sweep c=1,2,4,8,16 --rounds 8 --requests-per-round 100 --precision 10%',
    config: { concurrency: [1, 2, 4, 8, 16], rounds: 8, requestsPerRound: 100, precision: '10%' },
  },
];

/** One simulated level of the fixed plan: the warm-up's span and each round's records and window (ms). */
interface SimLevel {
  warmupMs: number;
  rounds: RequestRecord[][];
  windowsMs: number[];
}

// Closed loop: `lanes` requests in flight, the next sent as one ends; a batch (warm-up or round) drains before the
// next starts, as the level runner's rounds do.
function simulateLevel(profile: SimProfile, plan: LevelPlan, seed: number): SimLevel {
  const clock = new VirtualClock();
  const scheduler = new Scheduler(profile, createRng(seed), null, clock);
  const batches = [plan.warmup, ...Array.from({ length: plan.rounds }, () => plan.requestsPerRound)];
  const out: SimLevel = { warmupMs: 0, rounds: [], windowsMs: [] };
  let id = 0;
  const runBatch = (index: number): void => {
    if (index >= batches.length) return;
    const size = batches[index]!;
    const round = index - 1;
    const records: RequestRecord[] = [];
    const startMs = clock.nowMs();
    let sent = 0;
    let ended = 0;
    const send = (): void => {
      if (sent >= size) return;
      sent++;
      const record = makeRecord({ id: id++, round, warmup: round < 0, sendMs: clock.nowMs(), nIn: plan.inputLen });
      record.expectedIn = plan.inputLen;
      record.expectedOut = plan.outputLen;
      records.push(record);
      scheduler.submit({
        promptTokens: plan.inputLen,
        cachedTokens: 0, // unique prefixes, as the demo sends
        target: plan.outputLen, // ignore_eos: every request generates its max_tokens
        generated: 0,
        stallAt: -1,
        stallMs: 0,
        onTokens: (count, done) => {
          const now = clock.nowMs();
          record.firstTokenMs ??= now;
          record.chunks.push([now, count]);
          record.nOut += count;
          if (!done) return;
          record.endMs = now;
          record.clientChunkCount = record.chunks.length;
          if (++ended === size) finish();
          else send();
        },
      });
    };
    const finish = (): void => {
      const spanMs = Math.max(...records.map((r) => r.endMs!)) - startMs;
      if (round < 0) out.warmupMs = spanMs;
      else {
        out.rounds.push(records);
        out.windowsMs.push(spanMs);
      }
      clock.setTimer(() => runBatch(index + 1), 0);
    };
    for (let lane = 0; lane < Math.min(plan.concurrency, size); lane++) send();
  };
  runBatch(0);
  clock.runAll(100_000_000);
  return out;
}

/** What --precision did on one level: rounds run, requests and ms saved exactly, and the CLI's own estimate. */
interface LevelSaving {
  concurrency: number;
  planned: number;
  rounds: number;
  reached: boolean;
  fixedRequests: number;
  fixedMs: number;
  savedRequests: number;
  savedMs: number;
  estimatedMs: number;
  /** At the last look: each figure's half-width as a share of its value (null: no interval yet) and the round spread. */
  halfWidths: Array<number | null>;
  roundCv: number | null;
}

function levelSaving(level: SimLevel, plan: LevelPlan, precision: string): LevelSaving {
  const watch = precisionWatch(precision, plan.rounds)!;
  const measured: RequestRecord[] = [];
  let rounds = 0;
  for (const records of level.rounds) {
    measured.push(...records);
    rounds++;
    if (watch.stopAfterRound(rounds, measured)) break;
  }
  const last = watch.last()!;
  const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
  const roundRecords = level.rounds.slice(0, rounds).map((rs, i) => ({
    completed: rs.length,
    failed: 0,
    windowMs: level.windowsMs[i]!,
  }));
  const estimate = precisionSaved({ precision: last, rounds: roundRecords });
  return {
    concurrency: plan.concurrency,
    planned: plan.rounds,
    rounds,
    reached: last.reached,
    fixedRequests: plan.warmup + plan.rounds * plan.requestsPerRound,
    fixedMs: level.warmupMs + sum(level.windowsMs),
    savedRequests: (plan.rounds - rounds) * plan.requestsPerRound,
    savedMs: sum(level.windowsMs.slice(rounds)),
    estimatedMs: estimate?.ms ?? 0,
    halfWidths: last.figures.map((f) => f.halfWidth),
    roundCv: last.roundCv,
  };
}

/** The figures a --precision text names (as the level's record names them). */
function precisionWatchFigures(precision: string, planned: number): string[] {
  const watch = precisionWatch(precision, planned)!;
  watch.stopAfterRound(0, []);
  return watch.last()!.figures.map((f) => f.figure);
}

/** Means over the seeds of each figure's last half-width and of the round spread. */
function lastLook(ls: readonly LevelSaving[]): string {
  const share = (xs: Array<number | null>) => {
    const known = xs.filter((x): x is number => x !== null);
    return known.length === 0 ? 'no interval' : `${(mean(known) * 100).toFixed(1)} %`;
  };
  const widths = ls[0]!.halfWidths.map((_, i) => share(ls.map((l) => l.halfWidths[i] ?? null)));
  return [...widths, share(ls.map((l) => l.roundCv))].join(', ');
}

function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
}

function pct(part: number, whole: number): string {
  return whole > 0 ? `${((part / whole) * 100).toFixed(1)} %` : '—';
}

/** Runs a scenario over SEEDS seeds; prints a line per level (means over the seeds) and the scenario's total. */
function runScenario(profile: SimProfile, s: Scenario): Record<string, unknown> {
  const plans = planLevels(BenchConfigSchema.parse(s.config));
  const precision = String(s.config.precision);
  const bySeed = Array.from({ length: SEEDS }, (_, i) =>
    plans.map((plan, li) => levelSaving(simulateLevel(profile, plan, 1000 * (i + 1) + li), plan, precision)),
  );
  console.log(`\n${s.name}  (SIMULATED, ${SEEDS} seeds; means per level)`);
  const figures = precisionWatchFigures(precision, plans[0]!.rounds);
  console.log(
    `conc  planned rounds  rounds run  reached  requests saved / fixed   s saved / fixed    CLI estimate  at the last look: ${figures.join(', ')} ±, round spread`,
  );
  plans.forEach((plan, li) => {
    const ls = bySeed.map((levels) => levels[li]!);
    const m = (f: (l: LevelSaving) => number) => mean(ls.map(f));
    const rounds = ls.map((l) => l.rounds);
    console.log(
      `${String(plan.concurrency).padStart(4)}  ${String(plan.rounds).padStart(14)}  ${m((l) => l.rounds)
        .toFixed(2)
        .padStart(
          10,
        )} (${Math.min(...rounds)}–${Math.max(...rounds)})  ${String(ls.filter((l) => l.reached).length).padStart(3)}/${SEEDS}  ${m(
        (l) => l.savedRequests,
      )
        .toFixed(0)
        .padStart(
          7,
        )} / ${m((l) => l.fixedRequests).toFixed(0)}  ${(m((l) => l.savedMs) / 1000).toFixed(1).padStart(8)} / ${(
        m((l) => l.fixedMs) / 1000
      ).toFixed(1)}  ${(m((l) => l.estimatedMs) / 1000).toFixed(1).padStart(8)} s  ${lastLook(ls)}`,
    );
  });
  const totals = bySeed.map((levels) => ({
    savedRequests: levels.reduce((a, l) => a + l.savedRequests, 0),
    fixedRequests: levels.reduce((a, l) => a + l.fixedRequests, 0),
    savedMs: levels.reduce((a, l) => a + l.savedMs, 0),
    fixedMs: levels.reduce((a, l) => a + l.fixedMs, 0),
  }));
  const t = {
    savedRequests: mean(totals.map((x) => x.savedRequests)),
    fixedRequests: mean(totals.map((x) => x.fixedRequests)),
    savedS: mean(totals.map((x) => x.savedMs)) / 1000,
    fixedS: mean(totals.map((x) => x.fixedMs)) / 1000,
  };
  console.log(
    `total: ${t.savedRequests.toFixed(0)} of ${t.fixedRequests.toFixed(0)} requests (${pct(t.savedRequests, t.fixedRequests)}) and ${t.savedS.toFixed(1)} of ${t.fixedS.toFixed(1)} simulated s (${pct(t.savedS, t.fixedS)}) saved, warm-ups included in the fixed plan`,
  );
  return { scenario: s.name, ...t };
}

const profile = loadBundledProfile(DEFAULT_PROFILE_NAME);
console.log(
  `bench:precision — SIMULATED: the ${profile.name} engine on a virtual clock, closed loop, 512 tokens in / 24 out unless said`,
);
const results = SCENARIOS.map((s) => runScenario(profile, s));
console.log(JSON.stringify({ seeds: SEEDS, results }));
