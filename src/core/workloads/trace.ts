import { LIMITS } from '../../shared/config.js';
import type { BenchConfig } from '../../shared/config.js';
import { UserError } from '../errors.js';
import type { LevelPlan } from '../load/level-plan.js';
import { checkPlanLimits } from '../load/plan-limits.js';
import { readJsonRecords, type JsonRecord } from './json-records.js';

/** Tokens per hash id in a Mooncake trace: each id names one 512-token block of the prompt. */
export const TRACE_BLOCK_TOKENS = 512;

/** One request of a timed trace. */
export interface TraceEntry {
  /** 0-based record of the file. */
  sourceIndex: number;
  /** Arrival, ms from the trace's start (as recorded, before --trace-speed). */
  timestampMs: number;
  inputLen: number;
  outputLen: number;
  /** Block hash ids: requests with the same leading ids share those prompt blocks (the prefix cache sees it). */
  hashIds: number[];
}

function bad(path: string, r: JsonRecord, what: string): UserError {
  return new UserError(`--trace ${path}: ${r.where} ${what}`);
}

function tokens(path: string, r: JsonRecord, key: string, v: unknown): number {
  if (v === undefined) throw bad(path, r, `has no "${key}": each line needs timestamp, input_length and output_length`);
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > LIMITS.tokens.max) {
    throw bad(
      path,
      r,
      `has ${key} ${JSON.stringify(v).slice(0, 40)}: it must be a whole number from 1 to ${LIMITS.tokens.max}`,
    );
  }
  return v;
}

function entryOf(path: string, r: JsonRecord): TraceEntry {
  const o = r.value as Record<string, unknown> | null;
  if (!o || typeof o !== 'object' || Array.isArray(o)) throw bad(path, r, 'is not a JSON object');
  const t = o.timestamp;
  if (t === undefined) throw bad(path, r, 'has no "timestamp" (ms from the start of the trace)');
  // A week of trace at most: past that the number is not milliseconds.
  if (typeof t !== 'number' || !Number.isFinite(t) || t < 0 || t > 86_400_000 * 7) {
    throw bad(
      path,
      r,
      `has timestamp ${JSON.stringify(t).slice(0, 40)}: it must be ms from the trace's start, 0 to 7 days`,
    );
  }
  const hashes = o.hash_ids ?? [];
  if (!Array.isArray(hashes) || !hashes.every((h) => typeof h === 'number' && Number.isSafeInteger(h) && h >= 0)) {
    throw bad(path, r, 'has hash_ids that are not a list of non-negative whole numbers');
  }
  return {
    sourceIndex: r.index,
    timestampMs: t,
    inputLen: tokens(path, r, 'input_length', o.input_length),
    outputLen: tokens(path, r, 'output_length', o.output_length),
    hashIds: hashes as number[],
  };
}

/** Reads a Mooncake-style trace (JSONL of {timestamp, input_length, output_length, hash_ids}), in arrival order. */
export async function readTrace(path: string): Promise<TraceEntry[]> {
  const records = await readJsonRecords(path, { flag: '--trace', max: LIMITS.totalRequests.max });
  const entries = records.map((r) => entryOf(path, r));
  // Stable: equal timestamps keep the file's order.
  return entries.sort((a, b) => a.timestampMs - b.timestampMs || a.sourceIndex - b.sourceIndex);
}

/** The longest one replay of a trace may take: past it the gaps are hours of idle, not load (a unit mix-up?). */
const TRACE_REPLAY_MAX_MS = 24 * 3_600_000;

/** 90 ms, 12.5 s, 3.2 min, 28.0 h: a replay's length as a user reads it. */
function spanText(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${+(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${+(ms / 60_000).toFixed(1)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

/** A replay longer than a day, refused in one line with its longest gap and the --trace-speed that fits. */
function checkReplayLength(config: BenchConfig, schedule: readonly number[], speed: number): void {
  const span = (schedule.at(-1) ?? 0) - (schedule[0] ?? 0);
  if (!(span > TRACE_REPLAY_MAX_MS)) return;
  let gap = 0;
  let at = 0;
  for (let i = 1; i < schedule.length; i++) {
    const g = (schedule[i] as number) - (schedule[i - 1] as number);
    if (g > gap) [gap, at] = [g, i];
  }
  // The least speed that fits, rounded up to three significant digits (0.0000174, 1.17, 250).
  const least = (span / TRACE_REPLAY_MAX_MS) * speed;
  const step = 10 ** (Math.floor(Math.log10(least)) - 2);
  const fits = Number((Math.ceil(least / step) * step).toPrecision(3));
  throw new UserError(
    `--trace ${config.trace}: one replay would take ${spanText(span)} at --trace-speed ${speed} (the longest gap, ${spanText(gap)}, is between arrivals ${at} and ${at + 1}); at most ${spanText(TRACE_REPLAY_MAX_MS)} a round: pass --trace-speed ${fits} or more, or replay its first arrivals with --requests-per-round N`,
  );
}

/** One line on how long the replay takes: its arrivals, their span per round and the rounds' total. */
export function traceReplayText(plan: LevelPlan): string {
  const schedule = plan.schedule ?? [];
  const span = (schedule.at(-1) ?? 0) - (schedule[0] ?? 0);
  const all = span * plan.rounds;
  return `trace replay: ${schedule.length} arrivals over ${spanText(span)} a round, ${plan.rounds} round${plan.rounds === 1 ? '' : 's'}: about ${spanText(all)} of arrivals in all (plus the last responses)`;
}

/**
 * The one open-loop level of a trace replay: an optional warm-up (closed loop, the trace's first entries), then
 * --rounds replays of the trace (its first --requests-per-round arrivals when given), each at the trace's own gaps
 * divided by --trace-speed, so the round spread says how repeatable a replay is. Its rate is the trace's mean
 * arrival rate (none when its arrivals span 0 ms: a burst); its lengths the trace's mean (each request carries its own).
 */
export function tracePlan(config: BenchConfig, entries: readonly TraceEntry[]): LevelPlan {
  const speed = config.traceSpeed ?? 1;
  const requestsPerRound = Math.min(entries.length, config.requestsPerRound ?? Infinity);
  // The trace starts cold as recorded: no warm-up unless asked.
  const warmup = Math.min(config.warmup ?? 0, requestsPerRound);
  const rounds = config.rounds;
  const measured = entries.slice(0, requestsPerRound);
  const schedule = measured.map((e) => e.timestampMs / speed);
  checkReplayLength(config, schedule, speed);
  const spanS = ((schedule.at(-1) ?? 0) - (schedule[0] ?? 0)) / 1000;
  const mean = (f: (e: TraceEntry) => number): number =>
    Math.max(1, Math.round(measured.reduce((s, e) => s + f(e), 0) / Math.max(1, measured.length)));
  const plan: LevelPlan = {
    concurrency: config.maxConcurrency ?? 0,
    maxInFlight: config.maxConcurrency,
    inputLen: mean((e) => e.inputLen),
    outputLen: mean((e) => e.outputLen),
    rounds,
    requestsPerRound,
    warmup,
    schedule,
  };
  // Arrivals at one instant (or a single one) have no rate: n / 0 s is no number to show.
  // Three decimals, or three significant digits for a slow trace (0.000347/s is a rate; 0 is not).
  const rate = measured.length / spanS;
  if (spanS > 0) plan.rate = rate >= 0.1 ? Math.round(rate * 1000) / 1000 : Number(rate.toPrecision(3));
  else plan.burst = measured.length;
  checkPlanLimits(config, [plan]);
  return plan;
}
