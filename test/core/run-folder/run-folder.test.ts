import { appendFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createServebenchService } from '../../../src/core/api.js';
import { loadRunFolder, requestsHeldMaxBytes } from '../../../src/core/run-folder/load-folder.js';
import { listRuns, RUNS_INDEX_FILE, RUNS_INDEX_VERSION } from '../../../src/core/run-folder/list-runs.js';
import { loadRun } from '../../../src/core/run-folder/run-json.js';
import type { RunRecord } from '../../../src/shared/run-record.js';
import { fixtureCopy } from '../report/fixtures.js';
import { requestLines, requestRecord } from './request-lines.js';

/** A secret an older servebench left in run.json: not key-shaped, so only the record's own values find it. */
const OLD_SECRET = 'plain-old-password-4242';

type RecordJson = { label: string; config: { apiKey?: string } };

async function withRecord(dir: string, edit: (r: RecordJson) => void): Promise<void> {
  const file = join(dir, 'run.json');
  const record = JSON.parse(await readFile(file, 'utf8')) as RecordJson;
  edit(record);
  await writeFile(file, JSON.stringify(record));
}

/** Nothing is run here: only run folders are read. */
const noServer = async (): Promise<never> => {
  throw new Error('no server: this reads run folders only');
};

describe('the run folder module', () => {
  it("getRequests cleans an old folder's error lines of the secrets its run.json still holds, as getRun does", async () => {
    const dir = await fixtureCopy('closed');
    await withRecord(dir, (r) => (r.config.apiKey = OLD_SECRET));
    const failed = requestRecord(999_999, { ok: false, error: `401 from server: key ${OLD_SECRET} refused` });
    await appendFile(join(dir, 'requests.jsonl'), requestLines([failed]));
    const service = createServebenchService({ outDir: dirname(dir), deps: { startServer: noServer } });
    const page = await service.getRequests('closed');
    const line = page.requests.find((r) => r.id === 999_999);
    expect(line?.error).toBeDefined();
    expect(line?.error).not.toContain(OLD_SECRET);
    expect(JSON.stringify(await service.getRun('closed'))).not.toContain(OLD_SECRET);
    expect(JSON.stringify(await service.getRequestChart('closed'))).not.toContain(OLD_SECRET);
    await rm(dirname(dir), { recursive: true, force: true });
  });

  it('reports a cut-short last line as such, and names other bad lines by number and field', async () => {
    const dir = await fixtureCopy('open');
    const whole = await loadRunFolder(dir);
    const lines = whole.reads?.requests.lines ?? 0;
    const bad = JSON.stringify({ ...requestRecord(1), levelIndex: 'first' });
    await appendFile(join(dir, 'requests.jsonl'), `not json\n${bad}\n{"id":99,"lev`);
    const cut = await loadRunFolder(dir);
    expect(cut.requests).toHaveLength(whole.requests.length);
    expect(cut.reads?.requests).toMatchObject({ lines: lines + 3, read: lines, bad: 2, cutShortLine: lines + 3 });
    expect(cut.reads?.requests.badExamples).toEqual([
      { line: lines + 1, problem: 'not JSON' },
      { line: lines + 2, problem: expect.stringMatching(/^levelIndex:/) },
    ]);
    expect(cut.notes.join('\n')).toContain(`line ${lines + 3}`);
    await rm(dirname(dir), { recursive: true, force: true });
  });

  it('a last line that parses but lacks its newline is kept (a whole record, not a cut-short write)', async () => {
    const dir = await fixtureCopy('open');
    const whole = await loadRunFolder(dir);
    await appendFile(join(dir, 'requests.jsonl'), JSON.stringify(requestRecord(123_456)));
    const folder = await loadRunFolder(dir);
    expect(folder.requests).toHaveLength(whole.requests.length + 1);
    expect(folder.reads?.requests.cutShortLine).toBeNull();
    await rm(dirname(dir), { recursive: true, force: true });
  });

  it('a folder past the in-memory bound leaves whole levels out and says which, and how many requests', async () => {
    const dir = await fixtureCopy('sweep');
    const whole = await loadRunFolder(dir);
    const perLevel = new Map<number, number>();
    for (const r of whole.requests) perLevel.set(r.levelIndex, (perLevel.get(r.levelIndex) ?? 0) + 1);
    const text = await readFile(join(dir, 'requests.jsonl'), 'utf8');
    const firstLevelBytes = text
      .split('\n')
      .filter((l) => l && JSON.parse(l).levelIndex === 0)
      .reduce((n, l) => n + Buffer.byteLength(l), 0);
    // Room for level 0 and part of level 1: level 1 goes whole, and every level after it.
    const folder = await loadRunFolder(dir, { heldMaxBytes: firstLevelBytes + 10 });
    const later = [...perLevel.keys()].filter((l) => l > 0).sort((a, b) => a - b);
    expect(later.length).toBeGreaterThan(0);
    expect(folder.leftOut).toEqual({
      levels: later,
      requests: later.reduce((n, l) => n + (perLevel.get(l) ?? 0), 0),
      heldMaxBytes: firstLevelBytes + 10,
    });
    expect(folder.requests.every((r) => r.levelIndex === 0)).toBe(true);
    expect(folder.requests).toHaveLength(perLevel.get(0) ?? -1);
    expect(folder.notes.some((n) => n.includes(`level(s) ${later.map((l) => l + 1).join(', ')}`))).toBe(true);
    await rm(dirname(dir), { recursive: true, force: true });
  });
});

describe('the bound on requests held in memory', () => {
  it('is a sixteenth of the heap, at most 256 MiB', () => {
    expect(requestsHeldMaxBytes(2 * 2 ** 30)).toBe(128 * 2 ** 20);
    expect(requestsHeldMaxBytes(16 * 2 ** 30)).toBe(256 * 2 ** 20);
  });
});

describe('listRuns and its index', () => {
  async function runsFolder(n: number): Promise<{ out: string; record: RunRecord }> {
    const dir = await fixtureCopy('closed');
    const record = await loadRun(dir);
    const out = await mkdtemp(join(tmpdir(), 'sb-runs-'));
    for (let i = 0; i < n; i++) {
      const name = `20261130T0948${String(i).padStart(2, '0')}Z-r${i}`;
      await mkdir(join(out, name));
      await writeFile(join(out, name, 'run.json'), JSON.stringify({ ...record, id: name, label: `r${i}` }));
    }
    await rm(dirname(dir), { recursive: true, force: true });
    return { out, record };
  }

  it('reads each run.json once: a second listing reads only the folders that changed', async () => {
    const { out } = await runsFolder(5);
    const reads: string[] = [];
    const readRecord = async (dir: string): Promise<RunRecord> => {
      reads.push(dir);
      return loadRun(dir);
    };
    const first = await listRuns(out, { readRecord });
    expect(first).toHaveLength(5);
    expect(reads).toHaveLength(5);
    expect(JSON.parse(await readFile(join(out, RUNS_INDEX_FILE), 'utf8')).version).toBe(RUNS_INDEX_VERSION);
    reads.length = 0;
    expect(await listRuns(out, { readRecord })).toEqual(first);
    expect(reads).toEqual([]);
    await withRecord(join(out, '20261130T094802Z-r2'), (r) => (r.label = 'renamed'));
    const third = await listRuns(out, { readRecord });
    expect(reads).toEqual([join(out, '20261130T094802Z-r2')]);
    expect(third.find((r) => r.id === '20261130T094802Z-r2')?.label).toBe('renamed');
    await rm(out, { recursive: true, force: true });
  });

  it('a damaged index is rebuilt, never trusted; a removed folder leaves the listing', async () => {
    const { out } = await runsFolder(3);
    await writeFile(join(out, RUNS_INDEX_FILE), '{"version":1,"entries":{"x":{"key":1}}}');
    let reads = 0;
    const readRecord = async (dir: string): Promise<RunRecord> => {
      reads++;
      return loadRun(dir);
    };
    expect(await listRuns(out, { readRecord })).toHaveLength(3);
    expect(reads).toBe(3);
    await rm(join(out, '20261130T094801Z-r1'), { recursive: true });
    expect((await listRuns(out, { readRecord })).map((r) => r.label).sort()).toEqual(['r0', 'r2']);
    expect(reads).toBe(3);
    await rm(out, { recursive: true, force: true });
  });
});
