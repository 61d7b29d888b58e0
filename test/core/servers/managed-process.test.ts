import type { ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  ManagedProcess,
  type GroupControl,
  type ManagedProcessOptions,
  type ProcessExit,
  type SpawnFn,
} from '../../../src/core/servers/managed-process.js';
import type { StopGrace } from '../../../src/core/servers/process-group.js';
import { fakeClock, settle } from './fake-clock.js';
import { makeRun } from './helpers.js';

const GRACE: StopGrace = { interruptMs: 1, terminateMs: 2, killMs: 3 };

/** A child process that does only what the test tells it: print, exit, close its pipes. */
class FakeChild extends EventEmitter {
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  constructor(readonly pid: number | undefined) {
    super();
  }
  print(stream: 'stdout' | 'stderr', text: string): void {
    this[stream].write(text);
  }
  exit(code: number | null, signal: NodeJS.Signals | null = null): void {
    this.emit('exit', code, signal);
  }
  close(): void {
    this.stdout.end();
    this.stderr.end();
    this.emit('close');
  }
}

/** A spawn that records its call and hands out a FakeChild that spawns (or fails with `errorCode`). */
function fakeSpawn(options: { pid?: number; errorCode?: string } = {}): {
  spawn: SpawnFn;
  child: () => FakeChild;
  calls: Array<{ command: string; args: readonly string[]; detached: boolean }>;
} {
  let child: FakeChild | undefined;
  const calls: Array<{ command: string; args: readonly string[]; detached: boolean }> = [];
  const spawn: SpawnFn = (command, args, opts) => {
    calls.push({ command, args, detached: opts.detached });
    child = new FakeChild(options.errorCode ? undefined : (options.pid ?? 4242));
    const c = child;
    setImmediate(() => {
      if (options.errorCode) c.emit('error', Object.assign(new Error('spawn failed'), { code: options.errorCode }));
      else c.emit('spawn');
    });
    return c as unknown as ChildProcess;
  };
  return { spawn, child: () => child as FakeChild, calls };
}

/** Group control that records what was done to which group; stop() makes the fake child exit and close. */
function fakeGroups(onStop: () => void = () => undefined): GroupControl & {
  log: string[];
  ownerSignal: () => Promise<void>;
} {
  const log: string[] = [];
  let hook: () => Promise<void> = async () => undefined;
  return {
    log,
    ownerSignal: () => hook(),
    stop: async (pgid, _grace, onEscalate) => {
      log.push(`stop ${pgid}`);
      onEscalate('SIGTERM', 1);
      onStop();
    },
    track: (pgid, onOwnerSignal) => {
      log.push(`track ${pgid}`);
      hook = onOwnerSignal;
      return () => log.push(`untrack ${pgid}`);
    },
    watch: (pgid) => {
      log.push(`watch ${pgid}`);
      return () => log.push(`stand-down ${pgid}`);
    },
  };
}

async function options(extra: Partial<ManagedProcessOptions>): Promise<ManagedProcessOptions> {
  const { runDir } = await makeRun();
  return {
    command: 'engine',
    args: ['--port', '8000'],
    env: {},
    logFile: join(runDir, 'server.log'),
    header: '# servebench: engine --port 8000',
    tailLines: 3,
    grace: GRACE,
    ...extra,
  };
}

async function started(opts: ManagedProcessOptions): Promise<ManagedProcess> {
  const result = await ManagedProcess.start(opts);
  if (!(result instanceof ManagedProcess)) throw new Error(`spawn failed: ${result.code}`);
  return result;
}

describe('ManagedProcess (fake spawn)', () => {
  it('spawns detached (its own process group), guarded by the watchdog and the exit hooks', async () => {
    const spawn = fakeSpawn({ pid: 77 });
    const groups = fakeGroups();
    const proc = await started(await options({ spawn: spawn.spawn, groups }));
    expect(proc.pid).toBe(77);
    expect(spawn.calls).toEqual([{ command: 'engine', args: ['--port', '8000'], detached: true }]);
    expect(groups.log).toEqual(['watch 77', 'track 77']);
  });

  it('logs every line (redacted) after the header, keeps a bounded tail and passes lines on with their stream', async () => {
    const spawn = fakeSpawn();
    const lines: Array<[string, string]> = [];
    const opts = await options({
      spawn: spawn.spawn,
      groups: fakeGroups(() => spawn.child().close()),
      redact: (l) => l.replace(/sk-\w+/g, '***'),
      onLine: (line, stream) => lines.push([line, stream]),
    });
    const proc = await started(opts);
    spawn.child().print('stdout', 'one\ntwo key=sk-secret\n');
    spawn.child().print('stderr', 'three\nfour\n');
    await settle();
    expect(lines).toContainEqual(['two key=***', 'stdout']);
    expect(lines).toContainEqual(['four', 'stderr']);
    expect(proc.tail()).toHaveLength(3);
    expect(proc.tail(1)).toEqual([lines.at(-1)?.[0]]);
    await proc.reap();
    const text = await readFile(opts.logFile, 'utf8');
    expect(text.split('\n')[0]).toBe('# servebench: engine --port 8000');
    expect(text).toContain('two key=***\n');
    expect(text).not.toContain('sk-secret');
  });

  it('knows the exit at once: onExit runs synchronously with it, before `exited` resolves', async () => {
    const spawn = fakeSpawn();
    const seen: Array<ProcessExit | undefined> = [];
    let proc: ManagedProcess | undefined = undefined;
    proc = await started(
      await options({ spawn: spawn.spawn, groups: fakeGroups(), onExit: (exit) => seen.push(exit, proc?.exit) }),
    );
    expect(proc.exit).toBeUndefined();
    let resolved = false;
    void proc.exited.then(() => {
      resolved = true;
    });
    spawn.child().exit(null, 'SIGSEGV');
    expect(seen).toEqual([
      { code: null, signal: 'SIGSEGV' },
      { code: null, signal: 'SIGSEGV' },
    ]);
    expect(resolved).toBe(false);
    expect(await proc.exited).toEqual({ code: null, signal: 'SIGSEGV' });
  });

  it('reports a spawn that failed with its error code and launches nothing', async () => {
    const spawn = fakeSpawn({ errorCode: 'ENOENT' });
    const groups = fakeGroups();
    const opts = await options({ spawn: spawn.spawn, groups });
    expect(await ManagedProcess.start(opts)).toEqual({ ok: false, code: 'ENOENT' });
    expect(groups.log).toEqual([]);
    expect(await readFile(opts.logFile, 'utf8')).toBe('# servebench: engine --port 8000\n');
  });

  it('reaps once however often asked: stops the group with escalation, untracks it and stands the watchdog down', async () => {
    const spawn = fakeSpawn({ pid: 9 });
    const groups = fakeGroups(() => {
      spawn.child().exit(0);
      spawn.child().close();
    });
    const escalations: string[] = [];
    const proc = await started(
      await options({
        spawn: spawn.spawn,
        groups,
        onEscalate: (signal, afterMs) => escalations.push(`${signal} after ${afterMs}`),
      }),
    );
    await Promise.all([proc.reap(), proc.reap()]);
    await proc.reap();
    expect(groups.log).toEqual(['watch 9', 'track 9', 'stop 9', 'untrack 9', 'stand-down 9']);
    expect(escalations).toEqual(['SIGTERM after 1']);
  });

  it('does not wait forever for pipes that a process outside the group holds open', async () => {
    const clock = fakeClock();
    const spawn = fakeSpawn();
    const groups = fakeGroups(); // the group is gone, the pipes never close
    const proc = await started(await options({ spawn: spawn.spawn, groups, clock, pipesGraceMs: 2_000 }));
    let done = false;
    const reaped = proc.reap().then(() => {
      done = true;
    });
    await clock.advance(1_999);
    expect(done).toBe(false);
    await clock.advance(1);
    await reaped; // only the pipes grace of the fake clock can end it (the log file closes in real I/O time)
    expect(groups.log.at(-1)).toMatch(/^stand-down/);
  });

  it("stops through the owner's handler when servebench gets a signal (default: reap)", async () => {
    const spawn = fakeSpawn();
    const groups = fakeGroups(() => spawn.child().close());
    await started(await options({ spawn: spawn.spawn, groups }));
    await groups.ownerSignal();
    expect(groups.log).toContain('stop 4242');

    let asked = 0;
    const other = fakeGroups();
    await started(
      await options({
        spawn: fakeSpawn().spawn,
        groups: other,
        onOwnerSignal: async () => {
          asked++;
        },
      }),
    );
    await other.ownerSignal();
    expect(asked).toBe(1);
    expect(other.log).not.toContain('stop 4242');
  });
});
