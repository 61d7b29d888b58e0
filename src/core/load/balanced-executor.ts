import type { BalanceMode } from '../../shared/replicas.js';
import type { AbortReason } from './stream-client.js';
import type { RequestExecutor } from './executor.js';

/**
 * Spreads requests over one executor per replica, client-side (no router in front): in turn, or to the replica with
 * the fewest requests in flight (ties to the lowest index). Each outcome says which replica answered.
 */
export function createBalancedExecutor(replicas: readonly RequestExecutor[], mode: BalanceMode): RequestExecutor {
  const outstanding = replicas.map(() => 0);
  let next = 0;
  const choose = (): number => {
    if (mode === 'round-robin') return next++ % replicas.length;
    let best = 0;
    for (let i = 1; i < outstanding.length; i++) if (outstanding[i]! < outstanding[best]!) best = i;
    return best;
  };
  return {
    threads: replicas.reduce((s, e) => s + e.threads, 0),
    async execute(spec, onEnded) {
      const index = choose();
      outstanding[index]!++;
      let freed = false;
      // A slot counts as outstanding until its response ended on the wire, as the closed loop counts it.
      const free = (): void => {
        if (freed) return;
        freed = true;
        outstanding[index]!--;
      };
      try {
        const outcome = await replicas[index]!.execute(spec, () => {
          free();
          onEnded?.();
        });
        return { ...outcome, replica: index };
      } finally {
        free();
      }
    },
    abortAll: (reason?: AbortReason) => replicas.forEach((e) => e.abortAll(reason)),
    startLagWindow: () => replicas.forEach((e) => e.startLagWindow()),
    async endLagWindow() {
      const lags = (await Promise.all(replicas.map((e) => e.endLagWindow()))).filter((l) => l !== null);
      return lags.length > 0 ? Math.max(...lags) : null;
    },
    close: async () => {
      await Promise.all(replicas.map((e) => e.close()));
    },
  };
}
