import { describe, expect, it } from 'vitest';
import { createBalancedExecutor } from '../../../src/core/load/balanced-executor.js';
import type { RequestExecutor } from '../../../src/core/load/executor.js';
import type { RequestOutcome, RequestSpec } from '../../../src/core/load/stream-client.js';

/** A replica whose requests end when the test says: `finish(id)`. */
function replica(): RequestExecutor & { sent: number[]; finish(id: number): void } {
  const pending = new Map<number, () => void>();
  const sent: number[] = [];
  return {
    threads: 0,
    sent,
    finish: (id) => pending.get(id)?.(),
    execute(spec: RequestSpec, onEnded?: () => void) {
      sent.push(spec.id);
      return new Promise<RequestOutcome>((resolve) => {
        pending.set(spec.id, () => {
          onEnded?.();
          resolve({ id: spec.id, requestTag: spec.requestTag, sendMs: 0, endMs: 1, httpStatus: 200 } as RequestOutcome);
        });
      });
    },
    abortAll: () => undefined,
    startLagWindow: () => undefined,
    endLagWindow: async () => null,
    close: async () => undefined,
  };
}

const spec = (id: number): RequestSpec => ({
  id,
  path: '/v1/completions',
  body: '{}',
  timeoutMs: 1000,
  requestTag: `t-${id}`,
});

describe('client-side balancing over replicas', () => {
  it('round-robin sends in turn and says which replica answered', async () => {
    const [a, b] = [replica(), replica()];
    const ex = createBalancedExecutor([a, b], 'round-robin');
    const outs = [0, 1, 2, 3].map((i) => ex.execute(spec(i)));
    [0, 2].forEach((id) => a.finish(id));
    [1, 3].forEach((id) => b.finish(id));
    expect((await Promise.all(outs)).map((o) => o.replica)).toEqual([0, 1, 0, 1]);
  });

  it('least-outstanding sends to the replica with the fewest in flight', async () => {
    const [a, b] = [replica(), replica()];
    const ex = createBalancedExecutor([a, b], 'least-outstanding');
    void ex.execute(spec(0)); // a
    void ex.execute(spec(1)); // b
    a.finish(0);
    await Promise.resolve();
    void ex.execute(spec(2)); // a again: it has none in flight, b has one
    void ex.execute(spec(3)); // tie 1-1: the lowest index
    expect(a.sent).toEqual([0, 2, 3]);
    expect(b.sent).toEqual([1]);
  });
});
