import { describe, expect, it } from 'vitest';
import {
  apiCostPerMillionOutputTokens,
  blendedApiPrice,
  costPerMillionOutputTokens,
} from '../../../src/core/metrics/cost.js';

const round3 = (x: number | null): number => Math.round(x! * 1000) / 1000;

describe('cost per million output tokens', () => {
  it("matches the article's worked examples", () => {
    // 2 / (2000 * 3600) * 1e6 = 0.2777... -> $0.278
    expect(round3(costPerMillionOutputTokens(2, 2000))).toBe(0.278);
    // 2 / (500 * 3600) * 1e6 = 1.111... -> $1.11
    expect(round3(costPerMillionOutputTokens(2, 500))).toBe(1.111);
    expect(Math.round(costPerMillionOutputTokens(2, 500)! * 100) / 100).toBe(1.11);
  });

  it('divides by utilization', () => {
    // at 50 % utilization the 2000 tok/s case costs twice as much: 0.5555...
    expect(costPerMillionOutputTokens(2, 2000, 0.5)).toBeCloseTo(5 / 9, 12);
  });

  it('is null without throughput', () => {
    expect(costPerMillionOutputTokens(2, 0)).toBeNull();
  });
});

describe('API price comparison', () => {
  it('blends input and output prices by the run input:output ratio', () => {
    // $0.5/M in, $1.5/M out, 512 in : 256 out -> (0.5*512 + 1.5*256) / 768 = 0.8333...
    expect(blendedApiPrice(0.5, 1.5, 512, 256)).toBeCloseTo(0.8333333333, 9);
  });

  it('gives the API cost per million output tokens including their prompt tokens', () => {
    // every output token brings 2 input tokens: 1.5 + 0.5 * 2 = 2.5
    expect(apiCostPerMillionOutputTokens(0.5, 1.5, 512, 256)).toBe(2.5);
  });
});
