import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TRASH_DIR, createRunActions } from '../../../src/core/runs/run-actions.js';
import { listRuns } from '../../../src/core/runs/run-store.js';

const FIXTURES = join(import.meta.dirname, '..', '..', 'fixtures', 'runs');

describe('run actions (rename, delete, open)', () => {
  let out: string;
  let runId: string;
  beforeEach(async () => {
    out = await mkdtemp(join(tmpdir(), 'sb-actions-'));
    runId = '20261130T094800Z-sweep';
    await mkdir(join(out, runId));
    await writeFile(join(out, runId, 'run.json'), await readFile(join(FIXTURES, 'sweep', 'run.json')));
  });
  afterEach(() => rm(out, { recursive: true, force: true }));
  const actions = (extra: Partial<Parameters<typeof createRunActions>[0]> = {}) =>
    createRunActions({ outDir: out, activeRunId: async () => null, ...extra });

  it('rename changes the label in run.json; the folder keeps its name', async () => {
    await actions().renameRun(runId, '  H200 nightly ');
    const [listed] = await listRuns(out);
    expect(listed).toMatchObject({ id: expect.any(String), label: 'H200 nightly', dir: join(out, runId) });
  });

  it('delete without an OS trash moves the folder to .trash, which the list skips', async () => {
    const { movedTo } = await actions().deleteRun(runId);
    expect(movedTo).toBe(join(out, TRASH_DIR, runId));
    expect(await listRuns(out)).toEqual([]);
    expect(await readdir(join(out, TRASH_DIR))).toEqual([runId]);
  });

  it('delete with the OS trash hands it the folder', async () => {
    const trash = vi.fn(async () => undefined);
    expect(await actions({ trash }).deleteRun(runId)).toEqual({ movedTo: null });
    expect(trash).toHaveBeenCalledWith(join(out, runId));
  });

  it('open answers the path where no file manager is, and opens it where there is', async () => {
    expect(await actions().openRunFolder(runId)).toEqual({ path: join(out, runId), opened: false });
    const openPath = vi.fn(async () => '');
    expect(await actions({ openPath }).openRunFolder(runId)).toEqual({ path: join(out, runId), opened: true });
    await expect(actions({ openPath: async () => 'no handler' }).openRunFolder(runId)).rejects.toThrow(
      /could not open .*: no handler/,
    );
  });

  it.each(['..', '../x', '.trash', 'a/b', '/etc'])('refuses the id %s (never outside the runs folder)', async (id) => {
    await expect(actions().deleteRun(id)).rejects.toThrow(/invalid run id/);
    await expect(actions().renameRun(id, 'x')).rejects.toThrow(/invalid run id/);
    await expect(actions().openRunFolder(id)).rejects.toThrow(/invalid run id/);
  });

  it('the run in progress is neither renamed nor deleted; a missing run is named', async () => {
    const busy = actions({ activeRunId: async () => runId });
    await expect(busy.deleteRun(runId)).rejects.toThrow(/still going: delete it once/);
    await expect(busy.renameRun(runId, 'x')).rejects.toThrow(/still going: rename it once/);
    await expect(actions().deleteRun('20990101T000000Z-none')).rejects.toThrow(/not found in/);
  });
});
