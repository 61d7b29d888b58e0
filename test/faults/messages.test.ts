import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { urlCredentialsProblem } from '../../src/core/servers/http-probe.js';
import { attachServer } from '../../src/core/servers/attach-server.js';
import { readTrace, tracePlan, traceReplayText } from '../../src/core/workloads/trace.js';
import { BenchConfigSchema } from '../../src/shared/config.js';
import { fixtureCopy } from '../core/report/fixtures.js';

// Messages that sent a user the wrong way: each case now gets one line that names the real problem and its fix.

const cliPath = new URL('../../bin/servebench.js', import.meta.url).pathname;

function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function refusedInOneLine(r: { status: number | null; stderr: string }, pattern: RegExp): void {
  expect(r.status).toBe(2);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(r.stderr).toMatch(pattern);
}

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'sb-faults-messages-'));
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** A Mooncake trace of arrivals at these times (ms). */
async function traceFile(times: number[]): Promise<string> {
  const file = join(tmp, 'trace.jsonl');
  const lines = times.map((t) => JSON.stringify({ timestamp: t, input_length: 64, output_length: 8, hash_ids: [] }));
  await writeFile(file, `${lines.join('\n')}\n`);
  return file;
}

describe('messages that name the real problem', () => {
  it('--url http://user:pass@host: refused in one line (password masked), not "nothing answers"', () => {
    const r = cli(['run', '--url', 'http://bench:s3cret@127.0.0.1:9/', '--out', tmp]);
    refusedInOneLine(r, /--url http:\/\/bench:\*\*\*@127\.0\.0\.1:9\/: a user name or password in the URL is not sent/);
    expect(r.stderr).not.toMatch(/nothing answers|s3cret/);
  });

  it('the app attaching to a URL with credentials: the same line (the core refuses it, not only the CLI)', async () => {
    const error = await attachServer(
      BenchConfigSchema.parse({ server: { engine: 'attach', url: 'http://u:p@127.0.0.1:9' } }).server,
      { runDir: tmp },
      () => undefined,
      { fetch: () => Promise.reject(new Error('no request may be made')), pollMs: 1, connectTimeoutMs: 1 },
    ).catch((e: unknown) => e);
    expect((error as Error).message).toBe(urlCredentialsProblem('http://u:p@127.0.0.1:9'));
  });

  it('--out that is a run folder: refused, naming the folder to give; no run is nested inside it', async () => {
    const dir = await fixtureCopy('closed');
    const before = await readdir(dir);
    refusedInOneLine(
      cli(['run', '--out', dir]),
      /--out .*closed is a run folder \(it holds run\.json\): give the folder that holds run folders/,
    );
    expect(await readdir(dir)).toEqual(before);
    await rm(join(dir, '..'), { recursive: true, force: true });
  });

  it('--out inside a run folder (a subfolder, made or not yet): refused, naming the run folder; nothing nested', async () => {
    const dir = await fixtureCopy('closed');
    const before = await readdir(dir);
    refusedInOneLine(
      cli(['run', '--out', join(dir, 'sub', 'deeper')]),
      /--out .*deeper is inside the run folder .*closed \(it holds run\.json\): give the folder that holds run folders/,
    );
    expect(await readdir(dir)).toEqual(before);
    await rm(join(dir, '..'), { recursive: true, force: true });
  });

  it('ui --out /etc/passwd: refused before it listens', () => {
    const r = cli(['ui', '--port', '0', '--out', '/etc/passwd']);
    refusedInOneLine(r, /--out \/etc\/passwd: \/etc\/passwd is inside the system folder \/etc/);
    expect(r.stdout).not.toMatch(/open http/);
  });

  it('--trace-speed 0.000001: refused with how long a replay would take and the speed that fits, not "rate 0/s"', async () => {
    const file = await traceFile([0, 500, 1000, 1500]);
    const r = cli(['run', '--trace', file, '--trace-speed', '0.000001', '--out', tmp]);
    refusedInOneLine(
      r,
      /one replay would take 416\.7 h at --trace-speed 0\.000001 .*pass --trace-speed 0\.0000174 or more/,
    );
  });

  it('a trace with a 28-hour gap: refused, naming the gap and the arrivals around it', async () => {
    const entries = await readTrace(await traceFile([0, 1000, 2000, 2000 + 28 * 3_600_000]));
    const config = BenchConfigSchema.parse({ trace: join(tmp, 'trace.jsonl'), concurrency: [1] });
    expect(() => tracePlan(config, entries)).toThrow(
      /the longest gap, 28\.0 h, is between arrivals 3 and 4.*--trace-speed 1\.17 or more/,
    );
  });

  it('a slow but fair trace: its rate keeps its digits and the replay says how long it takes', async () => {
    const entries = await readTrace(await traceFile([0, 3_600_000, 7_200_000]));
    const plan = tracePlan(BenchConfigSchema.parse({ trace: 'x', rounds: 2 }), entries);
    expect(plan.rate).toBe(0.000417);
    expect(traceReplayText(plan)).toBe(
      'trace replay: 3 arrivals over 2.0 h a round, 2 rounds: about 4.0 h of arrivals in all (plus the last responses)',
    );
  });

  it.each(['run', 'report', 'compare', 'sim', 'gpu', 'ui'])('%s --bogus --help: the help, exit 0', (command) => {
    const r = cli([command, '--bogus', '--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: servebench /);
    expect(r.stderr).toBe('');
  });

  it("a YAML !!js tag in --config: one line naming the tag, not Node's six-line warning", async () => {
    const file = join(tmp, 'c.yaml');
    await writeFile(file, 'concurrency: !!js/function "function () { return 1 }"\n');
    const r = cli(['run', '--config', file, '--out', tmp]);
    refusedInOneLine(
      r,
      /--config .*c\.yaml is not valid YAML: the tag !!js\/function at line 1, column 14 is not supported/,
    );
    expect(r.stderr).not.toMatch(/YAMLWarning|--trace-warnings/);
  });

  it("a --config nested 5,000 deep: one line saying it nests too deep, not the parser's stack overflow", async () => {
    const file = join(tmp, 'deep.yaml');
    await writeFile(file, `server: ${'{a: '.repeat(5000)}1${'}'.repeat(5000)}\n`);
    const r = cli(['run', '--config', file, '--out', tmp]);
    refusedInOneLine(r, /--config .*deep\.yaml is not valid YAML: nested deeper than any servebench file/);
    expect(r.stderr).not.toMatch(/call stack/i);
  });

  it('compare of a run with itself (the folder, or its run.json): refused, as the app refuses it', async () => {
    const dir = await fixtureCopy('closed');
    refusedInOneLine(
      cli(['compare', dir, join(dir, 'run.json')]),
      /is given twice .*: give each run once to compare them/,
    );
    refusedInOneLine(cli(['compare', dir, `${dir}/`]), /is given twice/);
    await rm(join(dir, '..'), { recursive: true, force: true });
  });
});
