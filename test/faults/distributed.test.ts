import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { Clock } from '../../src/core/clock.js';
import { Coordinator } from '../../src/core/distributed/coordinator.js';
import { WorkerLink } from '../../src/core/distributed/worker-link.js';

// What a peer on the network can send rank 0's rendezvous: whatever it is, only that connection is dropped (and a
// joined worker named as lost); rank 0 and the workers that behave go on.

const clock: Clock = { originMonoNs: 0n, nowMs: () => performance.now() };
let coordinator: Coordinator;

beforeEach(async () => {
  coordinator = await Coordinator.listen({
    port: 0,
    bindHost: '127.0.0.1',
    worldSize: 3,
    version: 'v',
    configDigest: 'd',
    token: 'tok',
    clock,
    timeoutMs: 60_000,
  });
});
afterEach(async () => {
  await coordinator.close();
});

/** A raw client: sends frames and resolves with the close code it got. */
function raw(frames: Array<string | Buffer>): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${coordinator.port}/`);
    ws.on('open', () => frames.forEach((f) => ws.send(f)));
    ws.on('close', (code) => resolve(code));
    ws.on('error', () => undefined);
  });
}

const hello = (over: Record<string, unknown> = {}): string =>
  JSON.stringify({
    type: 'hello',
    protocol: 1,
    version: 'v',
    rank: 1,
    worldSize: 3,
    configDigest: 'd',
    host: 'h',
    pid: 1,
    token: 'tok',
    ...over,
  });

const join = (rank: number): Promise<WorkerLink> =>
  WorkerLink.connect({
    host: '127.0.0.1',
    port: coordinator.port,
    clock,
    connectTimeoutMs: 5000,
    hello: { version: 'v', rank, worldSize: 3, configDigest: 'd', host: `n${rank}`, pid: 1, token: 'tok' },
  });

describe('the rendezvous door', () => {
  it('drops a client that sends no JSON, or anything before its hello', async () => {
    expect(await raw(['not json'])).toBe(1006);
    expect(await raw([JSON.stringify({ type: 'records', levelIndex: 0, records: [] })])).toBe(1006);
    expect(coordinator.peers.size).toBe(0);
  });

  it('refuses a hello without the token, or with a rank out of range', async () => {
    expect(await raw([hello({ token: 'wrong' })])).toBe(1008);
    expect(await raw([hello({ rank: 3 })])).toBe(1008);
    expect(await raw([hello({ rank: -1 })])).toBe(1006);
    expect(coordinator.peers.size).toBe(0);
  });

  it('names a joined worker that sends impossible records as lost, and keeps the others', async () => {
    const lost: string[] = [];
    coordinator.onLost((p) => lost.push(`${p.rank}: ${p.lost ?? ''}`));
    const good = join(2);
    while (!coordinator.peers.has(2)) await new Promise((r) => setImmediate(r));
    const bad = raw([hello(), JSON.stringify({ type: 'records', levelIndex: 0, records: [{ id: -1, sendMs: 'x' }] })]);
    expect(await bad).toBe(1006);
    expect(lost).toEqual(['1: sent a frame that is not of this protocol']);
    coordinator.broadcast({ type: 'welcome', runId: 'r', runNonce: 1, tagPrefix: 'sb-1' });
    const link = await good;
    expect(coordinator.peers.get(2)?.lost).toBeUndefined();
    link.close();
  });
});
