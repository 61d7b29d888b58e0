import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { runBenchmark } from '../../src/core/benchmark.js';
import { isProcessAlive } from '../../src/core/servers/process-group.js';
import { EventFanout } from '../../src/core/ui-server/event-fanout.js';
import type { FanoutSocket, FanoutTimers } from '../../src/core/ui-server/event-fanout.js';
import { startUiServer } from '../../src/core/ui-server/index.js';
import { BenchConfigSchema } from '../../src/shared/config.js';
import type { ContractEvent } from '../../src/shared/contract.js';
import type { RunRecord } from '../../src/shared/run-record.js';
import { attachTo } from '../fakes/attached-server.js';
import { FakeService } from '../fakes/fake-service.js';
import { startHangingTokenizeServer } from '../fakes/hanging-tokenize-server.js';
import { frameMessages } from '../fakes/ui-frames.js';

const cli = new URL('../../bin/servebench.js', import.meta.url).pathname;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-faults-liveness-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A `servebench` child whose output is watched line by line. */
function servebench(args: string[]): {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
  seen: (pattern: RegExp) => Promise<RegExpMatchArray>;
  exited: Promise<number | null>;
} {
  const child = spawn(process.execPath, [cli, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  const waiters: Array<() => void> = [];
  const onData = (d: Buffer): void => {
    output += d.toString();
    for (const w of waiters.splice(0)) w();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  void exited.then(() => {
    for (const w of waiters.splice(0)) w();
  });
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const seen = async (pattern: RegExp): Promise<RegExpMatchArray> => {
    for (;;) {
      const match = output.match(pattern);
      if (match) return match;
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`exited before ${pattern}:\n${output}`);
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  return { child, output: () => output, seen, exited };
}

/** The child processes of `pid` (the engines it launched), from /proc. */
function childrenOf(pid: number): number[] {
  const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8');
  return text.split(/\s+/).filter(Boolean).map(Number);
}

async function onlyRun(out: string): Promise<RunRecord> {
  const [dir] = await readdir(out);
  return JSON.parse(await readFile(join(out, dir!, 'run.json'), 'utf8')) as RunRecord;
}

/** A WebSocket viewer that completes the upgrade and then never reads a byte (a frozen tab, a stuck script). */
async function stalledViewer(port: number, token: string): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  cleanups.push(() => void socket.destroy());
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(
    `GET /rpc?token=${token} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${Buffer.from('0123456789abcdef').toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  await new Promise<void>((resolve) => socket.once('data', () => resolve()));
  socket.pause();
  return socket;
}

describe('signals: a closed terminal stops a run as SIGTERM does', () => {
  it('SIGHUP to `servebench run`: the run folder ends cancelled naming SIGHUP, the launched engine is stopped', async () => {
    const out = await tempDir();
    const run = servebench([
      'run',
      ...['--concurrency', '1', '--rounds', '20', '--requests-per-round', '50'],
      ...['--input-len', '32', '--output-len', '64', '--out', out, '--label', 'hup'],
    ]);
    await run.seen(/c=1 in=32 out=64: \d+\/\d+ requests/);
    const engines = childrenOf(run.child.pid!);
    expect(engines.length).toBeGreaterThan(0);
    run.child.kill('SIGHUP');
    expect(await run.exited).toBe(130);
    const record = await onlyRun(out);
    expect(record.status).toBe('cancelled');
    // Which depends on whether the signal found the level's warm-up or its measured rounds: the record says which.
    expect(record.error).toMatch(
      /^stopped: the terminal closed \(SIGHUP\); (levels measured so far are kept|before any level was measured)$/,
    );
    expect(record.error?.endsWith('kept')).toBe(record.levels.length > 0);
    expect(engines.filter(isProcessAlive)).toEqual([]);
  }, 120_000);

  it('SIGHUP to `servebench ui` with a run going and 50 viewers that never read: the run ends cancelled, ui stops', async () => {
    const out = await tempDir();
    const ui = servebench(['ui', '--port', '0', '--out', out]);
    const [, port, token] = await ui.seen(/open http:\/\/127\.0\.0\.1:(\d+)\/\?token=(\S+)/);
    for (let i = 0; i < 50; i++) await stalledViewer(Number(port), token!);
    const ws = new WebSocket(`ws://127.0.0.1:${port}/rpc?token=${token}`);
    cleanups.push(() => ws.terminate());
    const measuring = new Promise<void>((resolve) =>
      ws.on('message', (d) => {
        if (frameMessages(d).some((m) => (m.event as ContractEvent | undefined)?.type === 'request-done')) resolve();
      }),
    );
    await new Promise<void>((resolve) => ws.once('open', () => resolve()));
    const config = { concurrency: [1], rounds: 20, requestsPerRound: 50, inputLen: [32], outputLen: [64] };
    ws.send(JSON.stringify({ id: 1, method: 'startRun', args: [config] }));
    await measuring;
    const engines = childrenOf(ui.child.pid!);
    ui.child.kill('SIGHUP');
    expect(await ui.exited).toBe(0);
    const record = await onlyRun(out);
    expect(record.status).toBe('cancelled');
    // Which depends on whether the signal found the level's warm-up or its measured rounds: the record says which.
    expect(record.error).toMatch(
      /^stopped: the terminal closed \(SIGHUP\); (levels measured so far are kept|before any level was measured)$/,
    );
    expect(record.error?.endsWith('kept')).toBe(record.levels.length > 0);
    expect(engines.filter(isProcessAlive)).toEqual([]);
  }, 120_000);
});

describe('a cancel during prompt calibration', () => {
  async function calibrate(answered: number, held: number) {
    const server = await startHangingTokenizeServer(answered);
    cleanups.push(() => server.close());
    const out = await tempDir();
    const controller = new AbortController();
    const config = BenchConfigSchema.parse({
      out,
      concurrency: [1],
      inputLen: [64],
      outputLen: [4],
      rounds: 1,
      requestsPerRound: 4,
      // Held calls answer only at --timeout: ten minutes, so a cancel that waits for them never ends this test.
      timeoutMs: 600_000,
      server: { engine: 'attach', url: server.url },
    });
    const result = runBenchmark(config, {
      startServer: attachTo(server.url, { model: 'hang-model', simulated: false }),
      signal: controller.signal,
    });
    await server.held(held);
    controller.abort();
    const { record } = await result;
    await server.allReleased();
    return record;
  }

  it('while a level calibrates its prompts: the /tokenize calls in flight are aborted at once, the run ends cancelled', async () => {
    // The server's /tokenize probe and the shared opening are answered; the level's first fit is held.
    const record = await calibrate(2, 1);
    expect(record.status).toBe('cancelled');
    expect(record.levels).toEqual([]);
  });

  it("while the server's /tokenize is probed: the probe in flight is aborted at once", async () => {
    const record = await calibrate(0, 1);
    expect(record.status).toBe('cancelled');
  });
});

/** A client socket of the fan-out: it reads everything (bufferedAmount stays 0) or nothing (it grows). */
class FakeViewer implements FanoutSocket {
  readonly OPEN = 1;
  readyState = 1;
  bufferedAmount = 0;
  frames: Buffer[] = [];
  terminated = false;
  constructor(private readonly reads: boolean) {}
  send(data: Buffer, _options: { binary: false }, cb: (error?: Error) => void): void {
    this.frames.push(data);
    if (!this.reads) this.bufferedAmount += data.length;
    cb();
  }
  terminate(): void {
    this.terminated = true;
    this.readyState = 3;
  }
  get received(): { events: ContractEvent[]; frames: number } {
    return { events: this.events(), frames: this.frames.length };
  }
  events(): ContractEvent[] {
    return this.frames.flatMap((f) => frameMessages(f).map((m) => m.event as ContractEvent));
  }
}

/** Timers the test turns by hand: `turn()` runs what is due, and time moves only when nothing is. */
function handTimers(): FanoutTimers & { turn(): boolean; turns: number } {
  let now = 0;
  let queue: Array<{ at: number; fn: () => void }> = [];
  const timers = {
    turns: 0,
    later(fn: () => void, ms: number) {
      const entry = { at: now + ms, fn };
      queue.push(entry);
      return () => (queue = queue.filter((e) => e !== entry));
    },
    nowMs: () => now,
    turn(): boolean {
      if (queue.length === 0) return false;
      queue.sort((a, b) => a.at - b.at);
      const next = queue.shift()!;
      now = Math.max(now, next.at);
      timers.turns++;
      next.fn();
      return true;
    },
  };
  return timers;
}

/**
 * A viewer got a busy run's progress coalesced: in few frames, at most 50 points a frame, in order, and the last
 * event (its done, total and failed counts) always.
 */
function expectPointsOf(viewer: { events: ContractEvent[]; frames: number }, sent: number): void {
  const done = viewer.events.map((e) => (e.type === 'request-done' ? e.done : -1));
  expect(done.at(-1)).toBe(sent);
  expect(done.every((d, i) => d > 0 && (i === 0 || d > done[i - 1]!))).toBe(true);
  expect(viewer.frames).toBeLessThan(sent / 50);
  expect(viewer.events.length).toBeLessThanOrEqual(viewer.frames * 50);
}

const requestDone = (i: number): ContractEvent => ({
  type: 'request-done',
  levelIndex: 0,
  round: 0,
  ok: true,
  ttftMs: 12.5,
  e2eMs: 250,
  endMs: i,
  done: i + 1,
  total: 20_000,
});

describe('viewers never slow a run', () => {
  it('400 viewers that never read: events cost the run one push each, frames go out a slice per turn, each stalled viewer is dropped past 1 MiB unread (plus the frame in hand); a reading viewer gets every log line and the progress coalesced', () => {
    const timers = handTimers();
    const dropped: string[] = [];
    const fanout = new EventFanout({ timers, onDrop: (line) => dropped.push(line) });
    const stalled = Array.from({ length: 400 }, () => new FakeViewer(false));
    const reader = new FakeViewer(true);
    for (const v of [...stalled, reader]) fanout.add(v, []);
    let writesDuringPushes = 0;
    const written = (): number => [...stalled, reader].reduce((a, v) => a + v.frames.length, 0);
    let biggestSlice = 0;
    const turn = (): boolean => {
      const before = written();
      const ran = timers.turn();
      biggestSlice = Math.max(biggestSlice, written() - before);
      return ran;
    };
    // A busy run: 20,000 requests ending, and a chatty server logging 2,000 lines of 1 KB meanwhile.
    const logLine = (i: number): ContractEvent => ({
      type: 'server-log',
      stream: 'stdout',
      line: `${i} ${'x'.repeat(1000)}`,
    });
    for (let i = 0; i < 20_000; i++) {
      const before = written();
      fanout.push(requestDone(i));
      if (i % 10 === 0) fanout.push(logLine(i / 10));
      writesDuringPushes += written() - before;
      // The run's turns and the fan-out's interleave: one fan-out turn per 100 events here.
      if (i % 100 === 99) turn();
    }
    while (turn());
    expect(writesDuringPushes).toBe(0);
    expect(biggestSlice).toBeLessThanOrEqual(64);
    const { events, frames } = reader.received;
    expect(events.filter((e) => e.type === 'server-log')).toEqual(Array.from({ length: 2_000 }, (_, i) => logLine(i)));
    expectPointsOf({ events: events.filter((e) => e.type === 'request-done'), frames }, 20_000);
    const biggestFrame = Math.max(...reader.frames.map((f) => f.length));
    for (const v of stalled) {
      expect(v.terminated).toBe(true);
      expect(v.bufferedAmount).toBeLessThanOrEqual((1 << 20) + biggestFrame);
    }
    expect(dropped).toHaveLength(400);
    expect(dropped[0]).toMatch(/^ui server: dropped a client that stopped reading \(\d+ bytes unread\)/);
    expect(fanout.size).toBe(401);
  });

  it('a viewer joining mid-batch gets the run so far as its replay and then only what came after, never twice', () => {
    const timers = handTimers();
    const fanout = new EventFanout({ timers });
    const early = new FakeViewer(true);
    fanout.add(early, []);
    const first = requestDone(0);
    fanout.push(first);
    const late = new FakeViewer(true);
    fanout.add(late, [first]);
    fanout.push(requestDone(1));
    while (timers.turn());
    expect(early.events()).toEqual([requestDone(0), requestDone(1)]);
    expect(late.events()).toEqual([requestDone(0), requestDone(1)]);
  });

  it('400 real WebSocket viewers that never read on `servebench ui`: a reading viewer still gets the progress, in order and coalesced', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'index.html'), '');
    const service = new FakeService();
    const server = await startUiServer({ service, port: 0, staticDir: dir, onError: () => undefined });
    cleanups.push(() => server.close());
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/rpc?token=${server.token}`);
    cleanups.push(() => ws.terminate());
    const got: ContractEvent[] = [];
    let frames = 0;
    let last: () => void = () => undefined;
    const allIn = new Promise<void>((resolve) => (last = resolve));
    ws.on('message', (d) => {
      frames++;
      for (const m of frameMessages(d)) got.push(m.event as ContractEvent);
      if ((got.at(-1) as { done?: number } | undefined)?.done === 20_000) last();
    });
    await new Promise<void>((resolve) => ws.once('open', () => resolve()));
    for (let i = 0; i < 400; i++) await stalledViewer(server.port, server.token);
    expect(server.clients()).toBe(401);
    // 20,000 events of a busy run, emitted in bursts as its requests end.
    for (let burst = 0; burst < 200; burst++) {
      for (let i = 0; i < 100; i++) service.emit(requestDone(burst * 100 + i));
      await new Promise<void>((r) => setImmediate(r));
    }
    await allIn;
    expectPointsOf({ events: got, frames }, 20_000);
  }, 120_000);
});
