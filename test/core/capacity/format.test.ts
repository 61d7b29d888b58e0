import { describe, expect, it } from 'vitest';
import type { CapacityProbe, CapacityResult, SloJudgement } from '../../../src/shared/capacity.js';
import { capacityLines, capacityTable } from '../../../src/shared/capacity-format.js';

const ttft = { metric: 'ttft', percentile: 95, limitMs: 500 } as const;
const tpot = { metric: 'tpot', percentile: 95, limitMs: 50 } as const;
const judged = (target: SloJudgement['target'], valueMs: number, ci: [number, number]): SloJudgement => ({
  target,
  valueMs,
  ci,
  verdict: ci[1] <= target.limitMs ? 'meets' : ci[0] > target.limitMs ? 'fails' : 'uncertain',
});
const probe = (load: number, slos: SloJudgement[], goodput: number): CapacityProbe => ({
  load,
  levelIndex: 0,
  slos,
  verdict: slos.some((s) => s.verdict === 'fails')
    ? 'fails'
    : slos.every((s) => s.verdict === 'meets')
      ? 'meets'
      : 'uncertain',
  goodputReqPerSec: goodput,
  outputTokPerSec: 100 * load,
  reqPerSec: load,
});

const base: CapacityResult = {
  mode: 'concurrency',
  targets: [ttft, tpot],
  capacity: 24,
  above: 32,
  outcome: 'bracketed',
  resolution: 0.125,
  maxLoad: 512,
  probes: [
    probe(16, [judged(ttft, 300, [280, 320]), judged(tpot, 30, [29, 31])], 15.9),
    probe(32, [judged(ttft, 612, [580, 650]), judged(tpot, 45, [44, 46])], 4.2),
    probe(24, [judged(ttft, 450, [430, 470]), judged(tpot, 38, [37, 39])], 23.5),
  ],
  outputTokPerSec: 2310.4,
  costPerMOutputTokUsd: 0.4204,
  saturation: null,
};

describe('capacityLines', () => {
  it('states the answer, the level above it with the interval that failed, throughput and cost', () => {
    expect(capacityLines(base)).toEqual([
      'capacity: c=24 meets ttft_p95≤500 ms, tpot_p95≤50 ms (c=32 fails: TTFT p95 612 ms [580, 650]) — 2,310 out tok/s, $0.42 per 1M output tokens',
      'searched 3 levels (verdict, goodput req/s meeting every SLO): c=16 meets 15.9 · c=32 fails 4.2 · c=24 meets 23.5',
    ]);
  });

  it('says when the level above is only uncertain, the bound was reached, or nothing met', () => {
    const unsure = {
      ...base,
      probes: [base.probes[0]!, probe(32, [judged(ttft, 490, [470, 520]), judged(tpot, 40, [39, 41])], 20)],
    };
    expect(capacityLines({ ...unsure, capacity: 16 })[0]).toContain(
      '(c=32 uncertain, the interval straddles the limit: TTFT p95 490 ms [470, 520])',
    );
    // Too few samples for an interval: uncertain, and no interval is said to straddle anything.
    const few: SloJudgement = { target: ttft, valueMs: 490, ci: null, verdict: 'uncertain', note: 'too few samples' };
    const sparse = { ...base, probes: [base.probes[0]!, probe(32, [few], 20)] };
    expect(capacityLines({ ...sparse, capacity: 16 })[0]).toContain(
      '(c=32 uncertain: TTFT p95 490 ms (too few samples))',
    );
    expect(capacityLines({ ...base, outcome: 'max-reached', above: null })[0]).toMatch(
      /^capacity: at least c=24, the search bound, meets .* \(raise --capacity-max to look further\)/,
    );
    expect(capacityLines({ ...base, capacity: null, above: 32, outcome: 'none-meets' })[0]).toBe(
      'capacity: none — c=32 fails: TTFT p95 612 ms [580, 650]',
    );
  });

  it('writes rates in the open loop and tabulates the levels in load order', () => {
    const open: CapacityResult = {
      ...base,
      mode: 'rate',
      capacity: 12.5,
      above: 14,
      probes: [probe(12.5, [judged(ttft, 100, [90, 110])], 12)],
      targets: [ttft],
    };
    expect(capacityLines(open)[0]).toMatch(/^capacity: 12.5 req\/s meets ttft_p95≤500 ms —/);
    const t = capacityTable(base);
    expect(t.header).toEqual([
      'Concurrency',
      'Verdict',
      'TTFT p95 (ms) [95 % CI] ≤ 500',
      'TPOT p95 (ms) [95 % CI] ≤ 50',
      'Goodput (req/s)',
      'Output tok/s',
    ]);
    expect(t.rows.map((r) => r.slice(0, 3))).toEqual([
      ['16', 'meets', '300 [280, 320]'],
      ['24', 'meets (capacity)', '450 [430, 470]'],
      ['32', 'fails', '612 [580, 650]'],
    ]);
  });
});
