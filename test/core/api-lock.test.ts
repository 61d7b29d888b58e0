import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServebenchService } from '../../src/core/api.js';
import type { ContractEvent } from '../../src/shared/contract.js';
import { holdingServer } from '../fakes/holding-server.js';

let out: string;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'sb-api-lock-'));
});
afterEach(async () => {
  await rm(out, { recursive: true, force: true });
});

const small = { concurrency: [1], inputLen: [16], outputLen: [4], rounds: 1, requestsPerRound: 4, warmup: 0 };

/** Resolves with the first event `pick` accepts. */
function nextEvent(
  service: ReturnType<typeof createServebenchService>,
  pick: (e: ContractEvent) => boolean,
): Promise<ContractEvent> {
  return new Promise((resolve) => {
    const off = service.subscribe((e) => {
      if (!pick(e)) return;
      off();
      resolve(e);
    });
  });
}

describe('one run at a time, the lock taken synchronously', () => {
  it('two startRun calls sent together: one run starts, the other is refused with "a run is already in progress"', async () => {
    const startServer = holdingServer(['holding']);
    const service = createServebenchService({ outDir: out, deps: { startServer } });
    const holding = nextEvent(service, (e) => e.type === 'server-log');
    const [a, b] = await Promise.allSettled([
      service.startRun({ ...small, label: 'first' }),
      service.startRun({ ...small, label: 'second' }),
    ]);
    expect(a.status).toBe('fulfilled');
    expect(b.status).toBe('rejected');
    expect(String((b as PromiseRejectedResult).reason)).toMatch(
      /a run is already in progress: run 'first' \(starting\)/,
    );
    await holding;
    const run = (a as PromiseFulfilledResult<{ runId: string }>).value;
    expect(startServer.starts).toBe(1);
    // Once the folder exists the refusal names the run.
    await expect(service.startRun(small)).rejects.toThrow(
      `a run is already in progress: run ${run.runId} is still going`,
    );
    await service.cancelRun(run.runId);
    expect(await service.activeRun()).toBeNull();
  });

  it('a start that fails before its folder exists releases the lock', async () => {
    const file = join(out, 'not-a-folder');
    await writeFile(file, 'x');
    const service = createServebenchService({ outDir: file, deps: { startServer: holdingServer() } });
    await expect(service.startRun(small)).rejects.toThrow();
    await expect(service.startRun(small)).rejects.not.toThrow(/already in progress/);
  });

  it('a listener told run-finished may start the next run at once', async () => {
    const service = createServebenchService({ outDir: out, deps: { startServer: holdingServer() } });
    const first = await service.startRun(small);
    const next = new Promise<unknown>((resolve) => {
      const off = service.subscribe((e) => {
        if (e.type !== 'run-finished') return;
        off();
        service.startRun(small).then(resolve, resolve);
      });
    });
    await service.cancelRun(first.runId);
    const second = (await next) as { runId?: string };
    expect(second.runId).toBeDefined();
    expect(second.runId).not.toBe(first.runId);
    await service.cancelRun(second.runId as string);
  });
});

describe('the live run replayed by the service (both windows and browser tabs get it)', () => {
  it('a late subscriber with replay gets the run so far, then new events; liveEvents answers the same', async () => {
    const service = createServebenchService({
      outDir: out,
      deps: { startServer: holdingServer(['line one', 'line two']) },
    });
    const logged = nextEvent(service, (e) => e.type === 'server-log' && e.line === 'line two');
    const run = await service.startRun(small);
    await logged;

    const late: ContractEvent[] = [];
    const off = service.subscribe((e) => late.push(e), { replay: true });
    expect(late[0]).toMatchObject({ type: 'run-started', runId: run.runId });
    expect(late.filter((e) => e.type === 'server-log').map((e) => (e as { line: string }).line)).toEqual([
      'line one',
      'line two',
    ]);
    expect(await service.liveEvents()).toEqual(late);

    const plain: ContractEvent[] = [];
    const offPlain = service.subscribe((e) => plain.push(e));
    await service.cancelRun(run.runId);
    expect(plain.at(-1)?.type).toBe('run-finished');
    expect(late.at(-1)?.type).toBe('run-finished');
    expect(plain[0]?.type).not.toBe('run-started'); // no replay without the option
    expect(await service.liveEvents()).toEqual([]); // nothing in progress
    off();
    offPlain();
  });

  it('a listener that throws does not stop the run or the other listeners', async () => {
    const service = createServebenchService({ outDir: out, deps: { startServer: holdingServer(['x']) } });
    service.subscribe(() => {
      throw new Error('broken client');
    });
    const seen: string[] = [];
    service.subscribe((e) => seen.push(e.type));
    const run = await service.startRun(small);
    await service.cancelRun(run.runId);
    expect(seen[0]).toBe('run-started');
    expect(seen.at(-1)).toBe('run-finished');
  });
});
