import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServebenchService } from '../../src/core/api.js';
import type { StartServer } from '../../src/core/servers/types.js';
import type { ContractEvent } from '../../src/shared/contract.js';
import { contractArgs } from '../../src/shared/contract.js';
import { startFakeOpenAi } from '../fakes/fake-openai-server.js';
import type { FakeOpenAiServer } from '../fakes/fake-openai-server.js';

let out: string;
let fake: FakeOpenAiServer;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'sb-api-'));
  fake = await startFakeOpenAi({ tokenize: true });
});
afterEach(async () => {
  await fake.close();
  await rm(out, { recursive: true, force: true });
});

const attach: StartServer = async () => ({
  info: { engine: 'attach', baseUrl: fake.url, model: 'fake-model', simulated: false },
  died: new Promise(() => undefined),
  stop: async () => undefined,
  logTail: () => [],
  exited: false,
  hasDied: () => null,
});

const small = { concurrency: [1, 2], inputLen: [16], outputLen: [4], rounds: 1, requestsPerRound: 4, warmup: 0 };

describe('servebench service (the contract the UI uses)', () => {
  it('starts a run, pushes its events, and then lists and loads it', async () => {
    const service = createServebenchService({ outDir: out, deps: { startServer: attach } });
    const events: ContractEvent[] = [];
    service.subscribe((e) => events.push(e));
    const run = await service.startRun(small);
    expect(run.runId).toMatch(/^\d{8}T\d{6}Z-run/);
    expect(await service.activeRun()).not.toBeNull();
    await service.idle();
    expect(await service.activeRun()).toBeNull();
    expect(events.map((e) => e.type)).toContain('level-finished');
    expect(events.at(-1)?.type).toBe('run-finished');
    const list = await service.listRuns();
    expect(list.map((r) => r.id)).toEqual([run.runId]);
    const record = await service.getRun(run.runId);
    expect(record.levels).toHaveLength(2);
    expect((await service.getRequests(run.runId)).requests).toHaveLength(8);
  });

  it('runs one benchmark at a time and cancels the active one', async () => {
    const service = createServebenchService({ outDir: out, deps: { startServer: attach } });
    const run = await service.startRun({ ...small, concurrency: [1, 1, 1, 1], requestsPerRound: 50 });
    await expect(service.startRun(small)).rejects.toThrow(/still going/);
    await expect(service.exportRun(run.runId, 'md')).rejects.toThrow(/still going: export it once it has finished$/);
    await service.cancelRun(run.runId);
    expect((await service.getRun(run.runId)).status).toBe('cancelled');
    expect((await service.exportRun(run.runId, 'md')).text).toMatch(/^# servebench report: /);
  });

  it('says a run that is not there is not found', async () => {
    const service = createServebenchService({ outDir: out, deps: { startServer: attach } });
    await expect(service.getRun('20260101T000000Z-gone')).rejects.toThrow(/^run 20260101T000000Z-gone not found in /);
  });

  it('refuses run ids that would leave the runs folder', async () => {
    const service = createServebenchService({ outDir: out, deps: { startServer: attach } });
    await expect(service.getRun('../etc')).rejects.toThrow(/invalid run id/);
  });

  it('validates call arguments at the boundary', () => {
    expect(contractArgs.getRun.safeParse(['x']).success).toBe(true);
    expect(contractArgs.getRun.safeParse([42]).success).toBe(false);
    expect(contractArgs.startRun.safeParse([{ concurrency: [0] }]).success).toBe(false);
  });
});
