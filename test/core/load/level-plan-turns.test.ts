import { describe, expect, it } from 'vitest';
import { planLevels } from '../../../src/core/load/level-plan.js';
import { contextProblem } from '../../../src/core/load/plan-limits.js';
import { BenchConfigSchema } from '../../../src/shared/config.js';

const plan = (input: Record<string, unknown>) => planLevels(BenchConfigSchema.parse(input));

describe('planLevels with --turns', () => {
  it('leaves single-turn plans as they were', () => {
    const [p] = plan({ concurrency: [2], requestsPerRound: 7, warmup: 5 });
    expect(p).toMatchObject({ requestsPerRound: 7, warmup: 5 });
    expect(p!.turns).toBeUndefined();
  });

  it('rounds requests per round and warm-up up to whole conversations, and carries turns and think time', () => {
    const [p] = plan({ concurrency: [2], requestsPerRound: 7, warmup: 5, turns: 3, thinkTimeMs: 50 });
    expect(p).toMatchObject({ requestsPerRound: 9, warmup: 6, turns: 3, thinkTimeMs: 50 });
    const [none] = plan({ concurrency: [2], requestsPerRound: 6, warmup: 0, turns: 3 });
    expect(none).toMatchObject({ requestsPerRound: 6, warmup: 0 });
  });

  it('gives each level at least as many conversations per round as its concurrency by default', () => {
    for (const p of plan({ concurrency: [1, 64], turns: 4 })) {
      expect(p.requestsPerRound % 4).toBe(0);
      expect(p.requestsPerRound / 4).toBeGreaterThanOrEqual(p.concurrency);
      expect(p.warmup % 4).toBe(0);
    }
  });

  it('refuses too few requests for the conversations in flight and the completions API, naming the fix', () => {
    expect(() => plan({ concurrency: [2], requestsPerRound: 4, turns: 3 })).toThrow(
      /below --concurrency 2 x --turns 3.*at least 6/,
    );
    expect(() => plan({ concurrency: [2], turns: 3, api: 'completions' })).toThrow(
      /needs the chat API.*--api completions/,
    );
  });

  it('plans open-loop levels in whole conversations: per round, warm-up, at least one conversation', () => {
    const [p] = plan({ rate: [4], maxConcurrency: 5, requestsPerRound: 12, warmup: 0, rounds: 1, turns: 3 });
    expect(p).toMatchObject({ rate: 4, maxInFlight: 5, requestsPerRound: 12, warmup: 0, turns: 3 });
    const [odd] = plan({ rate: [4], requestsPerRound: 7, warmup: 4, turns: 3, thinkTimeMs: 20 });
    expect(odd).toMatchObject({ requestsPerRound: 9, warmup: 6, thinkTimeMs: 20 });
    // A round shorter than one conversation still holds one: no concurrency to fill in the open loop.
    const [one] = plan({ rate: [4], requestsPerRound: 2, turns: 3 });
    expect(one!.requestsPerRound).toBe(3);
    for (const d of plan({ rate: [1, 50], turns: 4 })) {
      expect(d.requestsPerRound % 4).toBe(0);
      expect(d.warmup % 4).toBe(0);
    }
  });

  it('checks the context against a conversation’s last turn', () => {
    const plans = plan({ concurrency: [1], inputLen: [100], outputLen: [20], turns: 3 });
    expect(contextProblem(plans, { tokens: 400, source: 'test' })).toBeNull();
    expect(contextProblem(plans, { tokens: 300, source: 'test' })).toMatch(/--turns 3 x .* = 360 tokens/);
  });
});
