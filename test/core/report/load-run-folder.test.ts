import { readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isUserError } from '../../../src/core/errors.js';
import { loadRunFolder, requestsByLevel } from '../../../src/core/report/load-run-folder.js';
import { FIXTURES, fixtureCopy, fixtureDir } from './fixtures.js';

async function loadError(dir: string): Promise<Error> {
  try {
    await loadRunFolder(dir);
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the folder to be refused');
}

describe('loadRunFolder', () => {
  it.each(FIXTURES)(
    'reads the %s fixture: record, requests and telemetry, each level with its own requests',
    async (name) => {
      const folder = await loadRunFolder(fixtureDir(name));
      expect(folder.record.schemaVersion).toBe(1);
      expect(folder.record.levels.length).toBeGreaterThan(0);
      expect(folder.requests.length).toBeGreaterThan(0);
      expect(folder.notes).toEqual([]);
      const byLevel = requestsByLevel(folder);
      byLevel.forEach((reqs, i) => {
        const level = folder.record.levels[i]!;
        expect(reqs.length).toBeGreaterThan(0);
        for (const r of reqs) expect(r.sendMs).toBeGreaterThanOrEqual(level.startMs - 1);
      });
    },
  );

  it('accepts the path of run.json itself', async () => {
    const folder = await loadRunFolder(join(fixtureDir('closed'), 'run.json'));
    expect(folder.dir).toBe(fixtureDir('closed'));
  });

  it('says a folder from a newer servebench is newer, naming the fix', async () => {
    const dir = await fixtureCopy('closed');
    const record = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'));
    record.schemaVersion = 2;
    record.environment.servebenchVersion = '9.0.0';
    await writeFile(join(dir, 'run.json'), JSON.stringify(record));
    const error = await loadError(dir);
    expect(isUserError(error)).toBe(true);
    expect(error.message).toMatch(/schemaVersion 2, written by a newer servebench \(9\.0\.0\): update servebench/);
    await rm(dirname(dir), { recursive: true, force: true });
  });

  it('says a damaged run.json is damaged: cut short, or a field of the wrong type (with its path)', async () => {
    const dir = await fixtureCopy('closed');
    const text = await readFile(join(dir, 'run.json'), 'utf8');
    await writeFile(join(dir, 'run.json'), text.slice(0, text.length / 2));
    expect((await loadError(dir)).message).toMatch(/run\.json in .* is damaged \(not valid JSON/);
    const record = JSON.parse(text);
    record.levels[1].ttftMs.p50 = 'fast';
    await writeFile(join(dir, 'run.json'), JSON.stringify(record));
    expect((await loadError(dir)).message).toMatch(/is damaged \(levels\[1\]\.ttftMs\.p50: .*number/);
    delete record.schemaVersion;
    record.levels[1].ttftMs.p50 = 1;
    await writeFile(join(dir, 'run.json'), JSON.stringify(record));
    expect((await loadError(dir)).message).toMatch(/is damaged \(schemaVersion/);
    await rm(dirname(dir), { recursive: true, force: true });
  });

  it('names the fix for a missing folder or a folder without run.json', async () => {
    expect((await loadError('/nonexistent/run')).message).toMatch(/no run folder at \/nonexistent\/run/);
    const dir = await fixtureCopy('open');
    await rm(join(dir, 'run.json'));
    expect((await loadError(dir)).message).toMatch(/no run\.json in .*: give a run folder/);
    await rm(dirname(dir), { recursive: true, force: true });
  });

  it('keeps reading when the last line of requests.jsonl or telemetry.jsonl was cut short (a crash), and says so', async () => {
    const dir = await fixtureCopy('open');
    const whole = await loadRunFolder(dir);
    await writeFile(
      join(dir, 'requests.jsonl'),
      (await readFile(join(dir, 'requests.jsonl'), 'utf8')) + '{"id":99,"lev',
    );
    await writeFile(
      join(dir, 'telemetry.jsonl'),
      (await readFile(join(dir, 'telemetry.jsonl'), 'utf8')) + '{"kind":"gp',
    );
    const cut = await loadRunFolder(dir);
    expect(cut.requests.length).toBe(whole.requests.length);
    expect(cut.gpu.length).toBe(whole.gpu.length);
    expect(cut.reads?.requests).toMatchObject({ bad: 0, cutShortLine: (whole.reads?.requests.lines ?? 0) + 1 });
    expect(cut.reads?.telemetry).toMatchObject({ bad: 0, cutShortLine: (whole.reads?.telemetry.lines ?? 0) + 1 });
    expect(cut.notes).toHaveLength(2);
    await rm(dirname(dir), { recursive: true, force: true });
  });
});
