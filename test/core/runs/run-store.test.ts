import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UserError } from '../../../src/core/errors.js';
import {
  RunWriter,
  createRunDir,
  listRuns,
  loadRun,
  runTimestamp,
  safeLabel,
} from '../../../src/core/runs/run-store.js';
import type { RunRecord } from '../../../src/shared/run-record.js';

const fixture = join(import.meta.dirname, '..', '..', 'fixtures', 'runs', 'closed');

let out: string;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'sb-store-'));
});
afterEach(async () => {
  await rm(out, { recursive: true, force: true });
});

describe('run store', () => {
  it('names run folders <UTC timestamp>-<label> and never reuses one', async () => {
    const at = new Date('2026-11-30T09:48:00.123Z');
    expect(runTimestamp(at)).toBe('20261130T094800Z');
    expect(safeLabel('my model / fp8')).toBe('my-model-fp8');
    const a = await createRunDir(out, 'x', at);
    const b = await createRunDir(out, 'x', at);
    expect(a.endsWith('20261130T094800Z-x')).toBe(true);
    expect(b.endsWith('20261130T094800Z-x-2')).toBe(true);
  });

  it('after a failed write, still writes summary.csv and run.json (to record why) and names the failure', async () => {
    const dir = await createRunDir(out, 'w', new Date());
    const writer = new RunWriter(dir);
    void writer.appendLines('missing-folder/x.jsonl', ['a']);
    await writer.writeText('summary.csv', 'ok\n');
    await writer.flush();
    expect(writer.errors).toHaveLength(1);
    expect(await readFile(join(dir, 'summary.csv'), 'utf8')).toBe('ok\n');
  });
});

describe('reading run.json back (its schema)', () => {
  const loadError = async (dir: string): Promise<Error> => {
    const error = await loadRun(dir).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(UserError);
    return error as Error;
  };

  it('one line for a newer servebench, a damaged file, a field of the wrong type, a missing file', async () => {
    const record = JSON.parse(await readFile(join(fixture, 'run.json'), 'utf8')) as RunRecord;
    const newer = join(out, 'newer');
    await mkdir(newer);
    await writeFile(join(newer, 'run.json'), JSON.stringify({ ...record, schemaVersion: 2 }));
    expect((await loadError(newer)).message).toMatch(
      /^run\.json in .*newer has schemaVersion 2, written by a newer servebench \(.+\): update servebench to read it$/,
    );
    const cut = join(out, 'cut');
    await mkdir(cut);
    await writeFile(join(cut, 'run.json'), JSON.stringify(record).slice(0, 500));
    expect((await loadError(cut)).message).toMatch(/^run\.json in .*cut is damaged \(not valid JSON: .*\); restore it/);
    const wrong = join(out, 'wrong');
    await mkdir(wrong);
    await writeFile(join(wrong, 'run.json'), JSON.stringify({ ...record, levels: [{ ...record.levels[0], concurrency: 'x' }] }));
    expect((await loadError(wrong)).message).toMatch(/is damaged \(levels\[0\]\.concurrency: .*number/);
    for (const e of [await loadError(newer), await loadError(cut), await loadError(wrong), await loadError(join(out, 'none'))])
      expect(e.message).not.toContain('\n');
  });

  it('a run whose writer is gone still reads as interrupted', async () => {
    const record = JSON.parse(await readFile(join(fixture, 'run.json'), 'utf8')) as RunRecord;
    const dir = join(out, 'orphan');
    await mkdir(dir);
    // A pid that cannot be alive (above pid_max) on this host: the writer is gone.
    const writer = { pid: 2 ** 30, hostname: (await import('node:os')).hostname() };
    await writeFile(join(dir, 'run.json'), JSON.stringify({ ...record, status: 'running', finishedAt: null, writer }));
    expect((await loadRun(dir)).status).toBe('interrupted');
  });

  it('the runs list shows an unreadable folder with its reason, and the readable ones beside it', async () => {
    await cp(fixture, join(out, '20261130T094800Z-good'), { recursive: true });
    const bad = join(out, '20200102T030405Z-newer');
    await mkdir(bad);
    const record = JSON.parse(await readFile(join(fixture, 'run.json'), 'utf8')) as RunRecord;
    await writeFile(join(bad, 'run.json'), JSON.stringify({ ...record, schemaVersion: 7 }));
    await mkdir(join(out, 'not-a-run'));
    const runs = await listRuns(out);
    expect(runs.map((r) => r.label)).toEqual([record.label, '20200102T030405Z-newer']);
    expect(runs[1]!.unreadable).toMatch(/^run\.json has schemaVersion 7, written by a newer servebench .*: update servebench to read it$/);
    expect(runs[1]!.startedAt).toBe('2020-01-02T03:04:05.000Z');
    expect(runs[0]!.unreadable).toBeUndefined();
  });
});
