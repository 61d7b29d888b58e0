import { spawnSync } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UserError } from '../../src/core/errors.js';
import { executedSettings } from '../../src/core/runs/recorded-commands.js';
import { SEAL_KEY_FILE, sealHolds, sealKey } from '../../src/core/runs/run-seal.js';
import { benchConfigFromFlags } from '../../src/cli/run-options.js';
import { recordedConfig } from '../../src/cli/run-from.js';
import { confirmRecorded, recordedToConfirm, type ConfirmIo } from '../../src/cli/confirm-recorded.js';
import type { RunRecord } from '../../src/shared/run-record.js';
import { fixtureCopy } from '../core/report/fixtures.js';

// A run folder is anyone's to write: one from another user, another machine or a download can record a
// command line, a Python, an nvidia-smi or an env of its choosing. `run --from` runs none of that unasked.

const cliPath = new URL('../../bin/servebench.js', import.meta.url).pathname;

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'sb-faults-trust-'));
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

function cli(args: string[], env: NodeJS.ProcessEnv = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cliPath, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A run folder as someone else made it: its server is a shell command that leaves a marker, its nvidia-smi too. */
async function foreignFolder(): Promise<{ dir: string; marker: string; smiMarker: string }> {
  const dir = await fixtureCopy('closed');
  const marker = join(tmp, 'command-ran');
  const smiMarker = join(tmp, 'smi-ran');
  const smi = join(tmp, 'evil-smi');
  await writeFile(smi, `#!/bin/sh\ntouch '${smiMarker}'\nexit 1\n`);
  await chmod(smi, 0o755);
  const record = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8')) as Record<string, Record<string, unknown>>;
  record.config!.server = {
    engine: 'command',
    command: ['/bin/sh', '-c', `touch '${marker}'; exit 3`],
    env: {},
    extraArgs: [],
    simArgs: [],
    host: '127.0.0.1',
    port: 0,
    python: 'python3',
    startTimeoutMs: 5000,
  };
  record.config!.nvidiaSmi = smi;
  record.config!.out = tmp;
  delete (record as Record<string, unknown>).writer;
  await writeFile(join(dir, 'run.json'), JSON.stringify(record, null, 2));
  return { dir, marker, smiMarker };
}

describe('run --from a folder this user did not write here', () => {
  it('without a terminal and without the flag: refused in one line naming the flag and what it would run; nothing runs', async () => {
    const { dir, marker, smiMarker } = await foreignFolder();
    const r = cli(['run', '--from', dir]);
    expect(r.status).toBe(2);
    // The refusal is one line (after the --from notice that secrets are not recorded).
    const lines = r.stderr.trim().split('\n');
    expect(lines.filter((l) => l.startsWith('servebench run:'))).toHaveLength(1);
    expect(lines.every((l) => l.startsWith('servebench run:') || l.startsWith('--from: secrets'))).toBe(true);
    expect(r.stderr).toMatch(/was not written by you on this machine.*server\.command \(\/bin\/sh -c/);
    expect(r.stderr).toMatch(/nvidiaSmi \(.*evil-smi\).*--trust-recorded-commands/);
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(smiMarker)).toBe(false);
    await rm(join(dir, '..'), { recursive: true, force: true });
  });

  it('with --trust-recorded-commands: what it runs is shown, then run', async () => {
    const { dir, marker } = await foreignFolder();
    const r = cli(['run', '--from', dir, '--trust-recorded-commands', '--out', tmp]);
    expect(r.stderr).toMatch(/running it \(--trust-recorded-commands\):\n {2}server\.command: \/bin\/sh -c/);
    expect(existsSync(marker)).toBe(true);
    await rm(join(dir, '..'), { recursive: true, force: true });
  });

  it("a value given again on the command line is the user's own: only what still comes from the folder is asked", async () => {
    const { dir } = await foreignFolder();
    const from = await recordedConfig(dir, { cmd: 'my-server --port {port}', 'nvidia-smi': '/usr/bin/nvidia-smi' }, {});
    const config = benchConfigFromFlags(
      { cmd: 'my-server --port {port}', 'nvidia-smi': '/usr/bin/nvidia-smi' },
      {},
      from.base,
    );
    expect(from.sealed).toBe(false);
    expect(recordedToConfirm(from, config)).toEqual([]);
    const recorded = await recordedConfig(dir, {}, {});
    expect(recordedToConfirm(recorded, benchConfigFromFlags({}, {}, recorded.base)).map((s) => s.setting)).toEqual([
      'server.command',
      'nvidiaSmi',
    ]);
    await rm(join(dir, '..'), { recursive: true, force: true });
  });

  it('on a terminal: the settings are shown and a yes runs them, anything else runs nothing', async () => {
    const items = [{ setting: 'server.command', value: "/bin/sh -c 'rm -rf ~'" }];
    const lines: string[] = [];
    const io = (answer: string): ConfirmIo => ({
      interactive: true,
      ask: async () => answer,
      write: (l) => lines.push(l),
    });
    await expect(confirmRecorded(items, '/runs/x', false, io('y'))).resolves.toBeUndefined();
    expect(lines).toContain("  server.command: /bin/sh -c 'rm -rf ~'");
    for (const no of ['', 'n', 'no', 'yes please'])
      await expect(confirmRecorded(items, '/runs/x', false, io(no))).rejects.toThrow(/not confirmed, nothing was run/);
  });

  it("another user's key seals nothing here: a folder sealed with it asks; this user's seal runs unasked", async () => {
    const dir = await fixtureCopy('closed');
    const record = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8')) as RunRecord;
    const settings = executedSettings({ ...record.config, server: { ...record.config.server, command: ['srv'] } });
    const mine = sealKey(true) as Buffer;
    expect(mine).toHaveLength(32);
    const { sealOf } = await import('../../src/core/runs/run-seal.js');
    expect(sealHolds(sealOf(mine, record.id, settings), record.id, settings)).toBe(true);
    expect(sealHolds(sealOf(Buffer.alloc(32, 7), record.id, settings), record.id, settings)).toBe(false);
    // The same seal over other settings (the command edited afterwards) holds no more.
    const edited = executedSettings({ ...record.config, server: { ...record.config.server, command: ['evil'] } });
    expect(sealHolds(sealOf(mine, record.id, settings), record.id, edited)).toBe(false);
    await rm(join(dir, '..'), { recursive: true, force: true });
  });

  it('a seal key others can read or replace is no key: nothing is sealed with it and no seal checks', async () => {
    if (process.platform === 'win32') return;
    const dir = join(tmp, 'config');
    const env = { SERVEBENCH_CONFIG_DIR: dir };
    const key = sealKey(true, env) as Buffer;
    expect((await stat(join(dir, SEAL_KEY_FILE))).mode & 0o777).toBe(0o600);
    await chmod(join(dir, SEAL_KEY_FILE), 0o666);
    expect(sealKey(true, { SERVEBENCH_CONFIG_DIR: join(tmp, 'other') })).not.toBeNull();
    expect(sealKey(false, env)).toBeNull();
    expect(key).toHaveLength(32);
  });

  it('a run this user writes is sealed: --from it runs its recorded env without asking, another user is asked', async () => {
    const out = join(tmp, 'runs');
    const first = cli([
      'run',
      '--concurrency',
      '1',
      '--rounds',
      '1',
      '--requests-per-round',
      '2',
      '--no-warmup',
      '--env',
      'FOO=bar',
      '--out',
      out,
    ]);
    // 0, or 1 when a check fails on a loaded machine: the run itself went.
    expect([0, 1]).toContain(first.status);
    const dir = /run folder: (.*)/.exec(first.stdout)?.[1] as string;
    const again = cli([
      'run',
      '--from',
      dir,
      '--concurrency',
      '1',
      '--rounds',
      '1',
      '--requests-per-round',
      '2',
      '--no-warmup',
    ]);
    expect(again.stderr).not.toMatch(/not written by you/);
    expect([0, 1]).toContain(again.status);
    expect(again.stdout).toMatch(/run folder: /);
    const other = cli(['run', '--from', dir], { SERVEBENCH_CONFIG_DIR: join(tmp, 'another-user') });
    expect(other.status).toBe(2);
    expect(other.stderr).toMatch(/server\.env\.FOO \(bar\); .*--trust-recorded-commands/);
  });

  it('the refusal is a UserError the app and scripts can show: one line, exit 2', async () => {
    const io: ConfirmIo = { interactive: false, ask: async () => 'y', write: () => undefined };
    const error = await confirmRecorded([{ setting: 'server.python', value: '/tmp/py' }], '/r', false, io).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).exitCode).toBe(2);
    expect((error as Error).message.split('\n')).toHaveLength(1);
  });
});
