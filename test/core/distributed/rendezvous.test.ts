import { afterEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../../src/core/clock.js';
import { Coordinator, WorkerLostError } from '../../../src/core/distributed/coordinator.js';
import { WorkerLink } from '../../../src/core/distributed/worker-link.js';
import { measureOffset } from '../../../src/core/distributed/clock-sync.js';
import type { Timer } from '../../../src/core/distributed/waiting.js';

/** A clock read by hand: rank 0 and each worker get their own, `offset` apart. */
const clockAt = (offset: number): Clock => ({ originMonoNs: 0n, nowMs: () => performance.now() + offset });

/** Timers that fire only when the test says: time-outs without waiting for them. */
function manualTimer(): { timer: Timer; fire: () => void } {
  const pending: Array<() => void> = [];
  return {
    timer: (_ms, signal) =>
      new Promise((resolve) => {
        pending.push(resolve);
        signal.addEventListener('abort', () => resolve(), { once: true });
      }),
    fire: () => pending.splice(0).forEach((r) => r()),
  };
}

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const x of open.splice(0)) await x.close();
});

async function rendezvous(worldSize: number, timer = manualTimer()) {
  const coordinator = await Coordinator.listen({
    port: 0,
    bindHost: '127.0.0.1',
    worldSize,
    version: 'v',
    configDigest: 'd',
    clock: clockAt(0),
    timeoutMs: 1000,
    timer: timer.timer,
  });
  open.push(coordinator);
  const join = (rank: number, over: Partial<{ digest: string; offset: number }> = {}) =>
    WorkerLink.connect({
      host: '127.0.0.1',
      port: coordinator.port,
      clock: clockAt(over.offset ?? 0),
      connectTimeoutMs: 5000,
      hello: { version: 'v', rank, worldSize, configDigest: over.digest ?? 'd', host: `n${rank + 1}`, pid: 1 },
    });
  return { coordinator, join, timer };
}

describe('the rendezvous', () => {
  it('welcomes every worker, then starts each batch for all at one announced instant', async () => {
    const { coordinator, join } = await rendezvous(3);
    const links = [join(1), join(2)];
    await coordinator.waitForWorkers(new AbortController().signal);
    coordinator.broadcast({ type: 'welcome', runId: 'r', runNonce: 7, tagPrefix: 'sb-7' });
    const [a, b] = await Promise.all(links);
    open.push(a!, b!);
    expect(a!.welcome.runNonce).toBe(7);
    const starts = Promise.all([a!.arrive('L0:0'), b!.arrive('L0:0')]);
    const at = await coordinator.barrier('L0:0', new AbortController().signal);
    expect(await starts).toEqual([at, at]);
  });

  it("measures a worker's clock offset to rank 0 within its uncertainty", async () => {
    const { coordinator, join } = await rendezvous(2);
    const link = join(1, { offset: -5000 });
    await coordinator.waitForWorkers(new AbortController().signal);
    coordinator.broadcast({ type: 'welcome', runId: 'r', runNonce: 1, tagPrefix: 'sb-1' });
    const l = await link;
    open.push(l);
    const est = (await measureOffset(() => l.ping(), 8))!;
    expect(Math.abs(est.offsetMs - 5000)).toBeLessThanOrEqual(est.uncertaintyMs + 1e-6);
  });

  it('refuses a worker whose settings differ, naming the fix', async () => {
    const { join } = await rendezvous(2);
    await expect(join(1, { digest: 'other' })).rejects.toThrow(/settings that differ from rank 0's/);
    await expect(join(5)).rejects.toThrow(/rank 5, outside 1..1/);
  });

  it('names the workers that never joined once the time-out passes', async () => {
    const { coordinator, timer } = await rendezvous(3);
    const waiting = coordinator.waitForWorkers(new AbortController().signal);
    timer.fire();
    await expect(waiting).rejects.toThrow(/workers 1, 2 of 3 never joined/);
  });

  it('ends a barrier at once when a worker is lost, and names it; a late one after the time-out', async () => {
    const { coordinator, join, timer } = await rendezvous(3);
    const links = [join(1), join(2)];
    await coordinator.waitForWorkers(new AbortController().signal);
    coordinator.broadcast({ type: 'welcome', runId: 'r', runNonce: 1, tagPrefix: 'sb-1' });
    const [a, b] = await Promise.all(links);
    open.push(a!);
    void a!.arrive('L0:-1');
    const late = coordinator.barrier('L0:-1', new AbortController().signal);
    timer.fire();
    await expect(late).rejects.toThrow(/worker 2 \(n3\) did not reach the start of the batch/);
    const lost = coordinator.barrier('L0:0', new AbortController().signal);
    b!.close('it was cancelled (a signal: the launcher stopped this task)');
    const error = await lost.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkerLostError);
    expect((error as WorkerLostError).ranks).toEqual([2]);
    expect((error as Error).message).toMatch(/worker 2 \(n3\) was lost: it was cancelled/);
  });

  it('lets a worker know at once when rank 0 is gone', async () => {
    const { coordinator, join } = await rendezvous(2);
    const link = join(1);
    await coordinator.waitForWorkers(new AbortController().signal);
    coordinator.broadcast({ type: 'welcome', runId: 'r', runNonce: 1, tagPrefix: 'sb-1' });
    const l = await link;
    const next = l.next();
    for (const p of coordinator.peers.values()) p.socket.terminate();
    await expect(next).rejects.toThrow(/rank 0 at 127.0.0.1:\d+ was lost/);
  });
});
