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

  it('refuses too few requests for the conversations in flight, the completions API and open loop, naming the fix', () => {
    expect(() => plan({ concurrency: [2], requestsPerRound: 4, turns: 3 })).toThrow(
      /below --concurrency 2 x --turns 3.*at least 6/,
    );
    expect(() => plan({ concurrency: [2], turns: 3, api: 'completions' })).toThrow(
      /needs the chat API.*--api completions/,
    );
    expect(() => plan({ rate: [2], turns: 3 })).toThrow(/closed loop only.*--concurrency/);
  });

  it('checks the context against a conversation’s last turn', () => {
    const plans = plan({ concurrency: [1], inputLen: [100], outputLen: [20], turns: 3 });
    expect(contextProblem(plans, { tokens: 400, source: 'test' })).toBeNull();
    expect(contextProblem(plans, { tokens: 300, source: 'test' })).toMatch(/--turns 3 x .* = 360 tokens/);
  });
});
