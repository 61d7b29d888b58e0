import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { benchConfigFromFlags, readConfigFile } from '../../../src/cli/run-options.js';
import { capacityPlan, goodputSlo } from '../../../src/core/capacity/plan.js';
import { BenchConfigSchema, type BenchConfigInput } from '../../../src/shared/config.js';
import { parseSloTargets } from '../../../src/shared/capacity.js';

const dir = mkdtempSync(join(tmpdir(), 'sb-capacity-plan-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const config = (input: BenchConfigInput) => BenchConfigSchema.parse(input);

describe('capacity settings', () => {
  it('reads --slo percentile targets, and names the fix for a bad one in one line', () => {
    expect(parseSloTargets('ttft_p95=500, tpot_p99=50ms')).toEqual({
      ok: true,
      targets: [
        { metric: 'ttft', percentile: 95, limitMs: 500 },
        { metric: 'tpot', percentile: 99, limitMs: 50 },
      ],
    });
    const c = benchConfigFromFlags(
      { slo: 'ttft_p95=500,tpot_p95=50', 'find-capacity': true, 'capacity-max': '64' },
      {},
    );
    expect(c).toMatchObject({ findCapacity: true, capacityMax: 64, slo: { targets: 'ttft_p95=500,tpot_p95=50' } });
    expect(() => benchConfigFromFlags({ slo: 'ttft_p90=500' }, {})).toThrow(
      /cannot read 'ttft_p90=500': write NAME=MS with NAME one of ttft_p95, ttft_p99, ttft_p99\.9, .*\(e\.g\. ttft_p95=500,tpot_p95=50\)$/,
    );
  });

  it('takes --slo in a YAML file as a flag-style key, beside the per-request slo section', () => {
    const file = join(dir, 'a.yaml');
    writeFileSync(file, 'slo: ttft_p95=500\nfind-capacity: true\n');
    expect(readConfigFile(file)).toEqual({ slo: { targets: 'ttft_p95=500' }, findCapacity: true });
    writeFileSync(file, 'slo:\n  ttftMs: 300\n');
    expect(readConfigFile(file)).toEqual({ slo: { ttftMs: 300 } });
  });

  it('plans a search: start at the lowest listed level, bound by --capacity-max, same level rules as a sweep', () => {
    const plan = capacityPlan(config({ concurrency: [2, 8], findCapacity: true, slo: { targets: 'e2e_p95=900' } }));
    expect(plan).toMatchObject({ mode: 'concurrency', start: 2, max: 512 });
    expect(plan.planAt(32)).toMatchObject({ concurrency: 32, warmup: 64 });
    const fixed = capacityPlan(
      config({ findCapacity: true, slo: { ttftMs: 400 }, requestsPerRound: 60, capacityMax: 128 }),
    );
    expect([fixed.planAt(8).requestsPerRound, fixed.planAt(128).requestsPerRound]).toEqual([60, 128]);
    const open = capacityPlan(config({ rate: [4], capacityMax: 50, findCapacity: true, slo: { ttftMs: 400 } }));
    expect(open).toMatchObject({
      mode: 'rate',
      start: 4,
      max: 50,
      targets: [{ metric: 'ttft', percentile: 95, limitMs: 400 }],
    });
    expect(open.planAt(12.5)).toMatchObject({ rate: 12.5 });
  });

  it('plans one search per input/output length pair, each level at its own shape', () => {
    const slo = { targets: 'ttft_p95=500' };
    const plan = capacityPlan(config({ findCapacity: true, slo, inputLen: [128, 512], outputLen: [64, 32] }));
    expect(plan.shapes).toEqual([
      { inputLen: 128, outputLen: 64 },
      { inputLen: 128, outputLen: 32 },
      { inputLen: 512, outputLen: 64 },
      { inputLen: 512, outputLen: 32 },
    ]);
    expect(plan.planAt(8, { inputLen: 512, outputLen: 32 })).toMatchObject({
      concurrency: 8,
      inputLen: 512,
      outputLen: 32,
    });
    expect(plan.planAt(8)).toMatchObject({ inputLen: 128, outputLen: 64 });
    // Each shape's bound is checked before the run: a level at the largest input can be refused alone.
    expect(() => capacityPlan(config({ findCapacity: true, slo, inputLen: [16, 100_000], capacityMax: 512 }))).toThrow(
      /would build [\d,]+ prompts of 100,000 tokens/,
    );
  });

  it('grows a fixed --requests-per-round to whole conversations at every probed concurrency (--turns)', () => {
    const slo = { targets: 'ttft_p95=500' };
    const plan = capacityPlan(config({ findCapacity: true, slo, turns: 3, requestsPerRound: 12, capacityMax: 64 }));
    expect(plan.planAt(2)).toMatchObject({ concurrency: 2, requestsPerRound: 12, turns: 3 });
    expect(plan.planAt(64)).toMatchObject({ concurrency: 64, requestsPerRound: 192, turns: 3 });
  });

  it('refuses a search it cannot run, naming the fix', () => {
    expect(() => capacityPlan(config({ findCapacity: true }))).toThrow(/needs SLOs to meet: add --slo ttft_p95=500/);
    const slo = { targets: 'ttft_p95=500' };
    expect(() => capacityPlan(config({ findCapacity: true, slo, capacityMax: 5000 }))).toThrow(
      /--capacity-max 5000 is over 4,096/,
    );
    expect(() => capacityPlan(config({ findCapacity: true, slo, capacityMax: 7.5 }))).toThrow(/whole number/);
  });

  it('counts goodput against the per-request limits, else the percentile targets’ limits', () => {
    expect(goodputSlo(config({ slo: { targets: 'ttft_p95=500,ttft_p99=800,tpot_p95=50' } }))).toEqual({
      ttftMs: 500,
      tpotMs: 50,
    });
    expect(goodputSlo(config({ slo: { ttftMs: 300, targets: 'ttft_p95=500' } }))).toEqual({ ttftMs: 300 });
    expect(goodputSlo(config({ slo: { targets: 'itl_p95=30' } }))).toBeUndefined();
    expect(goodputSlo(config({}))).toBeUndefined();
  });
});
