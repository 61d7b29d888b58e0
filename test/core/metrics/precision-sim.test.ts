import { describe, expect, it } from 'vitest';
import { parsePrecision } from '../../../src/shared/precision.js';
import { percentile } from '../../../src/core/metrics/percentiles.js';
import { precisionAt } from '../../../src/core/metrics/precision.js';
import { createRng } from '../../../src/core/rng.js';
import { Scheduler } from '../../../src/core/sim/scheduler.js';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import { testProfile } from '../sim/helpers.js';
import { VirtualClock } from '../sim/virtual-clock.js';
import { makeRecord } from './make-record.js';

// The simulator's engine on a virtual clock, closed loop: its own TTFTs (received to first token, the truth log's)
// for `rounds` rounds of `perRound` requests; the same seed gives the same level on any machine.
const WARMUP = 200;
const PROFILE = testProfile({ jitter: 0.3, 'prefill-tok-per-s': 20_000, 'max-num-seqs': 4 });

function simLevel(seed: number, slots: number, perRound: number, rounds: number): RequestRecord[][] {
  const clock = new VirtualClock();
  const scheduler = new Scheduler(PROFILE, createRng(seed), null, clock);
  const rng = createRng(seed * 7919 + 1);
  const out: RequestRecord[][] = Array.from({ length: rounds }, () => []);
  // A warm-up, as every level has one, discarded: the lanes start together and their first requests queue.
  const warmup = WARMUP;
  const total = warmup + perRound * rounds;
  let sent = 0;
  const send = (): void => {
    if (sent >= total) return;
    const id = sent++;
    const round = id < warmup ? -1 : Math.floor((id - warmup) / perRound);
    const promptTokens = 64 + Math.floor(rng() * 960);
    const record = makeRecord({ id, round, warmup: round < 0, sendMs: clock.nowMs(), nOut: 8 });
    if (round >= 0) out[round]!.push(record);
    scheduler.submit({
      promptTokens,
      cachedTokens: 0,
      target: 8,
      generated: 0,
      stallAt: -1,
      stallMs: 0,
      onTokens: (_count: number, end: boolean): void => {
        record.firstTokenMs ??= clock.nowMs();
        if (!end) return;
        record.endMs = clock.nowMs();
        clock.setTimer(send, rng() < 0.3 ? rng() * 200 : 0);
      },
    });
  };
  for (let i = 0; i < slots; i++) clock.setTimer(send, i * 13);
  clock.runAll(10_000_000);
  return out;
}

describe('--precision against the simulator', () => {
  it('covers the engine p95 TTFT of 100 seeded closed-loop levels that stop by the rule at least 85 % of the time', () => {
    // The truth: the p95 of the same level's TTFTs pooled over 200 independent runs of it (seeds of their own).
    const truthRun = Array.from({ length: 200 }, (_, i) => simLevel(10_001 + i, 8, 800, 1)[0]!).flat();
    const ttfts = truthRun.map((r) => r.firstTokenMs! - r.sendMs).sort((a, b) => a - b);
    const truthP95 = percentile(ttfts, 95);
    const { targets } = parsePrecision('ttft_p95=10%') as { ok: true; targets: never[] };
    let covered = 0;
    let rounds = 0;
    const reps = 100;
    for (let seed = 1; seed <= reps; seed++) {
      const level = simLevel(seed, 8, 100, 8);
      const records: RequestRecord[] = [];
      for (let r = 0; r < level.length; r++) {
        records.push(...level[r]!);
        const look = precisionAt(records, targets, r + 1, 8);
        if (look.reached || r === level.length - 1) {
          const ci = look.figures[0]!.ci!;
          if (ci[0] <= truthP95 && truthP95 <= ci[1]) covered++;
          rounds += r + 1;
          break;
        }
      }
    }
    // Requests in flight together share the engine's queue: their TTFTs are not independent. The order-statistic
    // interval alone covered 59 % here; with the interval over the rounds beside it, 89 %: still short of the 95 %
    // the rule states for independent samples (docs/statistics.md). This pins the figure until a rule reaches 95 %.
    expect(covered / reps).toBeGreaterThanOrEqual(0.85);
    expect(rounds / reps).toBeLessThanOrEqual(8);
  });
});
