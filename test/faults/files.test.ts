import { spawnSync } from 'node:child_process';
import {
  appendFile as appendRaw,
  link,
  mkdtemp,
  readFile,
  readdir,
  rm,
  stat,
  truncate,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBenchmark } from '../../src/core/benchmark.js';
import { UserError } from '../../src/core/errors.js';
import { nodeRunFs, type RunFs } from '../../src/core/runs/run-fs.js';
import { RESERVE_FILE } from '../../src/core/runs/run-store.js';
import type { RunningServer, StartServer } from '../../src/core/servers/types.js';
import { createSettingsStore } from '../../src/core/settings/settings-store.js';
import { BenchConfigSchema } from '../../src/shared/config.js';
import type { RunRecord } from '../../src/shared/run-record.js';
import { fixtureCopy } from '../core/report/fixtures.js';
import { startFakeOpenAi, type FakeOpenAiServer } from '../fakes/fake-openai-server.js';

// Files and run folders servebench reads or writes, as a user or another user can make them: FIFOs, devices,
// huge files, names that walk out, damaged or impossible run records, full disks, writers at once.

const cliPath = new URL('../../bin/servebench.js', import.meta.url).pathname;

/** `servebench ARGS` as a child, with a time limit: a reader that hangs shows as status null, not a stuck test. */
function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** One line on stderr, no stack trace, exit 2. */
function refusedInOneLine(r: { status: number | null; stderr: string }, pattern: RegExp): void {
  expect(r.status).toBe(2);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(r.stderr).toMatch(pattern);
}

let tmp: string;
let fake: FakeOpenAiServer | null = null;
const copies: string[] = [];
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'sb-faults-files-'));
});
afterEach(async () => {
  await fake?.close();
  fake = null;
  await rm(tmp, { recursive: true, force: true });
  for (const dir of copies.splice(0)) await rm(join(dir, '..'), { recursive: true, force: true });
});

async function closedCopy(): Promise<string> {
  const dir = await fixtureCopy('closed');
  copies.push(dir);
  return dir;
}

/** A run folder whose run.json was changed by `edit` (a hand-edited or hostile folder). */
async function tamperedRun(edit: (record: Record<string, unknown>) => void): Promise<string> {
  const dir = await closedCopy();
  const record = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8')) as Record<string, unknown>;
  edit(record);
  await writeFile(join(dir, 'run.json'), JSON.stringify(record));
  return dir;
}

const mkfifo = (path: string): void => {
  expect(spawnSync('mkfifo', [path]).status).toBe(0);
};

describe.runIf(process.platform !== 'win32')('files that are not regular files, or too large', () => {
  it('a FIFO as requests.jsonl: report refuses it in one line instead of hanging', async () => {
    const dir = await closedCopy();
    await rm(join(dir, 'requests.jsonl'));
    mkfifo(join(dir, 'requests.jsonl'));
    refusedInOneLine(cli(['report', dir, '--out', join(tmp, 'r.html')]), /requests\.jsonl in .* is not a regular file/);
  });

  it('a FIFO as telemetry.jsonl: compare refuses it in one line instead of hanging', async () => {
    const dir = await closedCopy();
    await rm(join(dir, 'telemetry.jsonl'));
    mkfifo(join(dir, 'telemetry.jsonl'));
    const other = await closedCopy();
    refusedInOneLine(
      cli(['compare', dir, other, '--out', join(tmp, 'c.html')]),
      /telemetry\.jsonl in .* is not a regular file/,
    );
  });

  it('/dev/zero as --profile-file: refused at once, not read until memory runs out', () => {
    refusedInOneLine(cli(['sim', '--profile-file', '/dev/zero', '--port', '0']), /\/dev\/zero is not a regular file/);
  });

  it('/dev/zero as a compare input: refused at once', async () => {
    refusedInOneLine(cli(['compare', await closedCopy(), '/dev/zero']), /\/dev\/zero is not a regular file/);
  });

  it('a 600 MB compare input: one line with the cap, not "Invalid string length"', async () => {
    const big = join(tmp, 'big.json');
    await writeFile(big, '');
    await truncate(big, 600 * 2 ** 20); // sparse: no disk used
    const r = cli(['compare', await closedCopy(), big]);
    refusedInOneLine(r, /big\.json is larger than 256 MiB/);
    expect(r.stderr).not.toMatch(/Invalid string length/);
  });

  it('sim --profile ../../etc/passwd: names only the bundled profiles, reads no file', () => {
    const r = cli(['sim', '--profile', '../../etc/passwd', '--port', '0']);
    refusedInOneLine(r, /unknown sim profile '\.\.\/\.\.\/etc\/passwd'; use one of: .*instant/);
    expect(r.stderr).not.toMatch(/root:/);
  });

  it('a FIFO as run.json: listed folders and report refuse it in one line', async () => {
    const dir = await closedCopy();
    await rm(join(dir, 'run.json'));
    mkfifo(join(dir, 'run.json'));
    refusedInOneLine(
      cli(['report', dir, '--out', join(tmp, 'r.md'), '--format', 'md']),
      /run\.json in .* is not a regular file/,
    );
  });
});

describe('damaged run folders: one line, never a stack trace or a render of what was not measured', () => {
  it('a config nested 5,000 deep: html and json reports refuse it in one line (no stack overflow)', async () => {
    const dir = await closedCopy();
    const text = await readFile(join(dir, 'run.json'), 'utf8');
    const deep = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
    await writeFile(join(dir, 'run.json'), text.replace('"config": {', `"config": { "x": ${deep},`));
    for (const format of ['html', 'json'])
      refusedInOneLine(
        cli(['report', dir, '--format', format, '--out', '-']),
        /config\.x\.a.*: nested more than 64 deep/,
      );
  });

  it('a throughput of 1e308: refused, naming the field', async () => {
    const dir = await tamperedRun((r) => {
      (r.levels as Array<Record<string, unknown>>)[0]!.outputTokPerSec = 1e308;
    });
    refusedInOneLine(cli(['report', dir, '--out', '-']), /levels\[0\]\.outputTokPerSec: an impossible value .*1e\+308/);
  });

  it('a negative throughput in a round: refused, naming the field', async () => {
    const dir = await tamperedRun((r) => {
      const level = (r.levels as Array<{ rounds: Array<Record<string, unknown>> }>)[0]!;
      level.rounds[0]!.outputTokPerSec = -120;
    });
    refusedInOneLine(
      cli(['report', dir, '--format', 'md', '--out', '-']),
      /rounds\[0\]\.outputTokPerSec: .*below zero.*-120/,
    );
  });

  it('status "pwned": refused, naming the field', async () => {
    const dir = await tamperedRun((r) => {
      r.status = 'pwned';
    });
    refusedInOneLine(cli(['report', dir, '--out', '-']), /status: .*"pwned"/);
  });

  it('a startedAt that is not a date: refused, naming the field', async () => {
    const dir = await tamperedRun((r) => {
      r.startedAt = '<img src=x onerror=alert(1)>';
    });
    refusedInOneLine(cli(['report', dir, '--out', '-']), /startedAt: not a date/);
  });

  it('10^12 requests completed in a level: refused, naming the field (no run holds that many)', async () => {
    const dir = await tamperedRun((r) => {
      (r.levels as Array<{ completed: number }>)[0]!.completed = 1e12;
    });
    refusedInOneLine(cli(['report', dir, '--out', '-']), /levels\[0\]\.completed: .*more requests than a run holds/);
  });

  it('a negative TTFT percentile: refused, naming the field', async () => {
    const dir = await tamperedRun((r) => {
      const level = (r.levels as Array<{ ttftMs: Record<string, unknown> }>)[0]!;
      level.ttftMs.p50 = -3;
    });
    refusedInOneLine(cli(['report', dir, '--out', '-']), /levels\[0\]\.ttftMs\.p50: .*below zero/);
  });
});

describe('every file servebench writes is replaced whole', () => {
  it('report over an old report: the old file is replaced, never rewritten in place (a link to it keeps it whole)', async () => {
    const dir = await closedCopy();
    const file = join(tmp, 'report.md');
    await writeFile(file, 'old report\n');
    await link(file, join(tmp, 'old.md'));
    const r = cli(['report', dir, '--format', 'md', '--out', file]);
    expect(r.status).toBe(0);
    expect(await readFile(join(tmp, 'old.md'), 'utf8')).toBe('old report\n');
    expect(await readFile(file, 'utf8')).toMatch(/^# servebench report/);
    expect((await readdir(tmp)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('compare over an old comparison: replaced, never rewritten in place', async () => {
    const file = join(tmp, 'compare.md');
    await writeFile(file, 'old comparison\n');
    await link(file, join(tmp, 'old.md'));
    const r = cli(['compare', await closedCopy(), await closedCopy(), '--format', 'md', '--out', file]);
    expect(r.status).toBe(0);
    expect(await readFile(join(tmp, 'old.md'), 'utf8')).toBe('old comparison\n');
    expect(await readFile(file, 'utf8')).toMatch(/^# servebench compare/);
  });

  it('a disk that fills up mid-run: run.json ends failed with the reason (the space held for it is used), not running', async () => {
    fake = await startFakeOpenAi({ tokenize: true });
    const disk = freeingDisk(256 * 1024 + 64 * 1024);
    const config = BenchConfigSchema.parse({
      out: tmp,
      label: 'full',
      concurrency: [1, 2, 4],
      inputLen: [20],
      outputLen: [32],
      rounds: 2,
      // Far more lines than the disk holds, with the space held back or without.
      requestsPerRound: 100,
      warmup: 0,
      server: { engine: 'attach', url: fake.url },
    });
    const result = await runBenchmark(config, { startServer: attachTo(fake.url), runFs: disk });
    expect(disk.hitFull()).toBe(true);
    expect(result.exitCode).toBe(2);
    expect(result.failure).toMatch(/the disk is full \(ENOSPC\)/);
    expect(result.failure).not.toMatch(/could not be updated/);
    const onDisk = JSON.parse(await readFile(join(result.dir, 'run.json'), 'utf8')) as RunRecord;
    expect(onDisk.status).toBe('failed');
    expect(onDisk.error).toBe(result.failure);
    const left = await readdir(result.dir);
    expect(left).not.toContain(RESERVE_FILE);
    expect(left.filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

describe('settings', () => {
  it('four saves at once: all succeed, the file is whole, and the last one given wins', async () => {
    const store = createSettingsStore({ dir: tmp });
    const saves = [1, 2, 3, 4].map((n) => store.saveSettings({ form: { label: `run-${n}` } }));
    await expect(Promise.all(saves)).resolves.toHaveLength(4);
    const file = JSON.parse(await readFile(join(tmp, 'settings.json'), 'utf8')) as { form: { label: string } };
    expect(file.form.label).toBe('run-4');
    expect((await readdir(tmp)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it("the runs folder /etc is refused in one line; a folder of one's own is taken", async () => {
    const store = createSettingsStore({ dir: tmp });
    const error = await store.saveSettings({ runsDir: '/etc' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as Error).message).toMatch(
      /^runs folder \/etc: \/etc is a system folder; choose a folder of your own/,
    );
    const mine = join(tmp, 'runs');
    await expect(store.saveSettings({ runsDir: mine })).resolves.toMatchObject({ settings: { runsDir: mine } });
    expect((await stat(mine)).isDirectory()).toBe(true);
  });

  it('a settings file that is a FIFO: the defaults, said in one line (no hang)', async () => {
    if (process.platform === 'win32') return;
    mkfifo(join(tmp, 'settings.json'));
    const warnings: string[] = [];
    const store = createSettingsStore({ dir: tmp, onWarning: (l) => warnings.push(l) });
    await expect(store.getSettings()).resolves.toMatchObject({ settings: {} });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/settings\.json is not a regular file/);
  });
});

// ---- helpers -------------------------------------------------------------------------------------

function enospc(path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOSPC: no space left on device, write '${path}'`), { code: 'ENOSPC' });
}

/**
 * A disk that gives space back when a file is removed or replaced, as a real one does, and that another
 * program fills to the last byte once the run has written `before` bytes; a write that does not fit writes
 * what fits, then fails with ENOSPC.
 */
function freeingDisk(before: number): RunFs & { hitFull: () => boolean } {
  const sizes = new Map<string, number>();
  let full = false;
  let room = Infinity;
  const used = (): number => [...sizes.values()].reduce((a, b) => a + b, 0);
  const fits = (path: string, bytes: number, replacing: boolean): number => {
    if (room === Infinity && used() + bytes > before) room = used();
    const free = room - used() + (replacing ? (sizes.get(path) ?? 0) : 0);
    return Math.max(0, Math.min(bytes, free));
  };
  return {
    ...nodeRunFs,
    hitFull: () => full,
    async writeFile(path, data, mode) {
      const bytes = Buffer.from(data);
      const n = fits(path, bytes.length, true);
      if (n < bytes.length) {
        full = true;
        await writeFile(path, bytes.subarray(0, n));
        sizes.set(path, n);
        throw enospc(path);
      }
      await nodeRunFs.writeFile(path, data, mode);
      sizes.set(path, bytes.length);
    },
    async appendFile(path, data) {
      const bytes = Buffer.from(data);
      const n = fits(path, bytes.length, false);
      const before = sizes.get(path) ?? 0;
      if (n < bytes.length) {
        full = true;
        await appendRaw(path, bytes.subarray(0, n));
        sizes.set(path, before + n);
        throw enospc(path);
      }
      await nodeRunFs.appendFile(path, data);
      sizes.set(path, before + bytes.length);
    },
    async rename(from, to) {
      await nodeRunFs.rename(from, to);
      sizes.set(to, sizes.get(from) ?? 0);
      sizes.delete(from);
    },
    async unlink(path) {
      await nodeRunFs.unlink(path);
      sizes.delete(path);
    },
    async truncate(path, length) {
      await nodeRunFs.truncate(path, length);
      sizes.set(path, length);
    },
  };
}

function attachTo(url: string): StartServer {
  return async () => {
    const server: RunningServer = {
      info: { engine: 'attach', baseUrl: url, model: 'fake-model', simulated: false },
      died: new Promise(() => undefined),
      exited: false,
      hasDied: () => null,
      stop: async () => undefined,
      logTail: () => [],
    };
    return server;
  };
}
