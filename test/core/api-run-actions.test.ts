import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServebenchService } from '../../src/core/api.js';
import type { ContractEvent } from '../../src/shared/contract.js';
import { holdingServer } from '../fakes/holding-server.js';

let out: string;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'sb-api-actions-'));
});
afterEach(async () => {
  await rm(out, { recursive: true, force: true });
});

const small = { concurrency: [1], inputLen: [16], outputLen: [4], rounds: 1, requestsPerRound: 4, warmup: 0 };

describe('the service manages past runs, never the one in progress', () => {
  it('refuses to rename or delete the run in progress; once it has ended, renames and deletes it', async () => {
    const service = createServebenchService({ outDir: out, deps: { startServer: holdingServer(['holding']) } });
    const holding = new Promise<void>((resolve) => {
      const off = service.subscribe((e: ContractEvent) => {
        if (e.type !== 'server-log') return;
        off();
        resolve();
      });
    });
    const run = await service.startRun({ ...small, label: 'first' });
    await holding;
    await expect(service.deleteRun(run.runId)).rejects.toThrow(/still going: delete it once/);
    await expect(service.renameRun(run.runId, 'x')).rejects.toThrow(/still going: rename it once/);
    await service.cancelRun(run.runId);

    await service.renameRun(run.runId, 'kept');
    expect((await service.listRuns()).map((r) => r.label)).toEqual(['kept']);
    expect(await service.openRunFolder(run.runId)).toEqual({ path: join(out, run.runId), opened: false });
    expect(await service.deleteRun(run.runId)).toEqual({ movedTo: join(out, '.trash', run.runId) });
    expect(await service.listRuns()).toEqual([]);
    expect(await readdir(join(out, '.trash'))).toEqual([run.runId]);
  });
});
