import type { BenchConfig } from '../../shared/config.js';
import type { PlannedLevel } from '../../shared/run-estimate.js';
import { UserError } from '../errors.js';
import { minSamplesForCi } from '../metrics/percentiles.js';
import { checkPlanLimits } from './plan-limits.js';

/** One level of a sweep: a load shape at fixed input and output lengths. */
export interface LevelPlan {
  concurrency: number;
  /**
   * Open loop only: Poisson arrivals at this rate (req/s); concurrency is then the in-flight cap or none. Multi-turn:
   * still requests (turns) per second, so conversations arrive at rate / turns per second.
   */
  rate?: number;
  maxInFlight?: number;
  inputLen: number;
  outputLen: number;
  rounds: number;
  requestsPerRound: number;
  warmup: number;
  /** Multi-turn (chat): turns per conversation, > 1; rounds and warm-up hold whole conversations. */
  turns?: number;
  /** Multi-turn: pause between a turn's end and the conversation's next turn, ms. */
  thinkTimeMs?: number;
  /** Trace replay: the arrivals of one round (ms, trace time); every round replays them from the first. */
  schedule?: number[];
  /** Trace replay: the arrival the schedule counts from (a worker's share of a trace keeps the trace's own times). */
  scheduleOriginMs?: number;
  /** Trace replay whose arrivals span 0 ms: requests per round sent at once; `rate` is then absent (there is none). */
  burst?: number;
}

/**
 * Closed-loop warm-up floor: the client's own first ~20 requests of a level are slow (JIT, connections), not only the
 * server's; at high concurrency a second wave warms the paths a whole wave takes (bench:client shows both).
 */
export const MIN_WARMUP_REQUESTS = 24;
/** Default closed-loop warm-up: two waves, at least MIN_WARMUP_REQUESTS. */
function defaultWarmup(concurrency: number): number {
  return Math.max(2 * concurrency, MIN_WARMUP_REQUESTS);
}

/** Requests per round so that a level's samples carry a p99 (hence p95) confidence interval. */
export function credibleRequestsPerRound(rounds: number): number {
  return Math.ceil((minSamplesForCi(99) ?? 0) / rounds);
}

/** Multi-turn: refuses what it cannot run, and rounds requests per round and warm-up up to whole conversations. */
function withTurns(config: BenchConfig, plans: LevelPlan[]): LevelPlan[] {
  const turns = config.turns ?? 1;
  if (turns <= 1) return plans;
  if (config.api !== 'chat') {
    throw new UserError(
      `--turns ${turns} needs the chat API (a conversation is a list of messages): drop --api ${config.api}`,
    );
  }
  const whole = (n: number): number => Math.ceil(n / turns) * turns;
  return plans.map((p) => {
    // Closed loop: C conversations in flight need C x K requests a round; open loop: one conversation at least.
    const least = p.rate === undefined ? p.concurrency * turns : turns;
    if (p.rate === undefined && config.requestsPerRound !== undefined && config.requestsPerRound < least) {
      throw new UserError(
        `--requests-per-round ${config.requestsPerRound} is below --concurrency ${p.concurrency} x --turns ${turns}: that level could never have ${p.concurrency} conversations in flight; raise --requests-per-round to at least ${least}`,
      );
    }
    return {
      ...p,
      requestsPerRound: whole(Math.max(p.requestsPerRound, least)),
      warmup: whole(p.warmup),
      turns,
      thinkTimeMs: config.thinkTimeMs,
    };
  });
}

/** Expands a config into its levels: input length x output length x (concurrency or rate), in that nesting. */
export function planLevels(config: BenchConfig): LevelPlan[] {
  const tooFew =
    config.requestsPerRound !== undefined && !config.rate?.length
      ? config.concurrency.find((c) => c > config.requestsPerRound!)
      : undefined;
  if (tooFew !== undefined) {
    throw new UserError(
      `--requests-per-round ${config.requestsPerRound} is below --concurrency ${tooFew}: that level could never have ${tooFew} requests in flight; raise --requests-per-round to at least ${tooFew}`,
    );
  }
  const plans: LevelPlan[] = [];
  for (const inputLen of config.inputLen) {
    for (const outputLen of config.outputLen) {
      if (config.rate && config.rate.length > 0) {
        for (const rate of config.rate) {
          const cap = config.maxConcurrency;
          plans.push({
            concurrency: cap ?? 0,
            rate,
            maxInFlight: cap,
            inputLen,
            outputLen,
            rounds: config.rounds,
            requestsPerRound:
              config.requestsPerRound ?? Math.max(credibleRequestsPerRound(config.rounds), Math.round(rate * 10)),
            warmup: config.warmup ?? Math.max(1, Math.min(cap ?? 4, 4)),
          });
        }
      } else {
        for (const concurrency of config.concurrency) {
          plans.push({
            concurrency,
            inputLen,
            outputLen,
            rounds: config.rounds,
            requestsPerRound:
              config.requestsPerRound ?? Math.max(credibleRequestsPerRound(config.rounds), 4 * concurrency),
            warmup: config.warmup ?? defaultWarmup(concurrency),
          });
        }
      }
    }
  }
  const planned = withTurns(config, plans);
  checkPlanLimits(config, planned);
  return planned;
}

/** Largest number of requests that can be in flight at once over the plans (for server sizing). */
export function maxPlannedConcurrency(plans: LevelPlan[]): number {
  return plans.reduce((m, p) => Math.max(m, p.maxInFlight ?? p.concurrency), 1);
}

/** A level's plan as the time-left estimate sees it: its load and every request it sends, warm-up included. */
export function plannedLevel(plan: LevelPlan, outputFromFile = false): PlannedLevel {
  return {
    concurrency: plan.concurrency,
    ...(plan.rate !== undefined ? { rate: plan.rate } : {}),
    requests: plan.warmup + plan.rounds * plan.requestsPerRound,
    // A prompt file's own output lengths: the flag's is not what these requests ask.
    ...(outputFromFile ? {} : { outputLen: plan.outputLen }),
  };
}
