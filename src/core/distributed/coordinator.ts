import { WebSocketServer, type WebSocket } from 'ws';
import type { RequestRecord } from '../../shared/request-record.js';
import type { Clock } from '../clock.js';
import { UserError } from '../errors.js';
import type { ClockOffset } from './clock-sync.js';
import {
  HEARTBEAT_MISSES,
  HEARTBEAT_MS,
  MAX_FRAME_BYTES,
  PROTOCOL_VERSION,
  ToCoordinatorSchema,
  parseFrame,
  type ToCoordinator,
  type ToWorker,
  type WorkerLevelReport,
} from './protocol.js';
import { deferred, realTimer, type Deferred, type Timer } from './waiting.js';

/** How rank 0 hosts the rendezvous. */
export interface CoordinatorOptions {
  port: number;
  /** Address to listen on (default every interface: the workers are on other machines). */
  bindHost?: string;
  worldSize: number;
  version: string;
  configDigest: string;
  /** A shared secret every worker must present (SERVEBENCH_DIST_TOKEN), when set. */
  token?: string;
  clock: Clock;
  /** How long rank 0 waits for every worker to join, and at each barrier. */
  timeoutMs: number;
  /** Heartbeat period; a worker that answers none for HEARTBEAT_MISSES in a row is lost. */
  heartbeatMs?: number;
  timer?: Timer;
}

/** A worker that joined: where it runs and what it has sent for each level. */
export interface Peer {
  rank: number;
  host: string;
  pid: number;
  socket: WebSocket;
  /** Heartbeats sent since the last answer. */
  missed: number;
  /** Set once the worker is gone (connection closed, said bye, timed out): why, in a line. */
  lost?: string;
  arrived: Set<string>;
  records: Map<number, RequestRecord[]>;
  reports: Map<number, WorkerLevelReport>;
  offsets: Map<number, { before?: ClockOffset; after?: ClockOffset }>;
}

/** The rendezvous ended a wait because a worker is gone or late: which, and why (the level is cut short). */
export class WorkerLostError extends Error {
  constructor(
    message: string,
    readonly ranks: number[],
  ) {
    super(message);
    this.name = 'WorkerLostError';
  }
}

/** One line naming a worker: `worker 2 (n3)`. */
export function workerName(rank: number, host: string | undefined): string {
  return host ? `worker ${rank} (${host})` : `worker ${rank}`;
}

interface Waiter {
  check: () => void;
}

/**
 * Rank 0's side of the rendezvous: a WebSocket server the workers join (rank, world size, version and settings
 * checked), that answers clock pings, holds barriers and announces start instants on rank 0's clock, and collects
 * each worker's records and level reports. A worker whose connection closes or stops answering is named as lost.
 */
export class Coordinator {
  readonly peers = new Map<number, Peer>();
  private readonly waiters = new Set<Waiter>();
  private readonly lostListeners: Array<(peer: Peer) => void> = [];
  private readonly failListeners: Array<(reason: string, exitCode: number | undefined) => void> = [];
  private readonly heartbeat: NodeJS.Timeout;
  private readonly timer: Timer;
  private ended = false;

  private constructor(
    private readonly server: WebSocketServer,
    private readonly options: CoordinatorOptions,
    readonly port: number,
  ) {
    this.timer = options.timer ?? realTimer;
    server.on('connection', (socket) => this.accept(socket));
    this.heartbeat = setInterval(() => this.beat(), options.heartbeatMs ?? HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** Starts listening; one line naming the fix when the port is taken. */
  static async listen(options: CoordinatorOptions): Promise<Coordinator> {
    const server = new WebSocketServer({ port: options.port, host: options.bindHost, maxPayload: MAX_FRAME_BYTES });
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve);
      server.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          error.code === 'EADDRINUSE'
            ? new UserError(
                `rank 0 cannot listen on port ${options.port}: it is in use; pass --coordinator HOST:PORT with a free port`,
              )
            : error,
        ),
      );
    });
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : options.port;
    return new Coordinator(server, options, port);
  }

  /** Called with each worker lost after it joined. */
  onLost(listener: (peer: Peer) => void): void {
    this.lostListeners.push(listener);
  }

  /** Called when a worker reports that the run cannot go on (every request refused, a setting its server rejects). */
  onFail(listener: (reason: string, exitCode: number | undefined) => void): void {
    this.failListeners.push(listener);
  }

  /** The workers that are still there. */
  live(): Peer[] {
    return [...this.peers.values()].filter((p) => p.lost === undefined);
  }

  private send(socket: WebSocket, message: ToWorker): void {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
  }

  /** Sends a message to every live worker. */
  broadcast(message: ToWorker): void {
    for (const peer of this.live()) this.send(peer.socket, message);
  }

  private refuse(socket: WebSocket, reason: string): void {
    this.send(socket, { type: 'reject', reason });
    socket.close(1008, 'refused');
  }

  private accept(socket: WebSocket): void {
    let peer: Peer | null = null;
    socket.on('message', (data) => {
      const message = parseFrame(ToCoordinatorSchema, data);
      if (!message) {
        if (peer) this.lose(peer, 'sent a frame that is not of this protocol');
        socket.terminate();
        return;
      }
      if (!peer) {
        if (message.type === 'hello') peer = this.join(socket, message);
        else socket.terminate();
        return;
      }
      this.handle(peer, message);
    });
    socket.on('pong', () => {
      if (peer) peer.missed = 0;
    });
    socket.on('close', (code) => {
      if (peer) this.lose(peer, `its connection closed (code ${code})`);
    });
    socket.on('error', () => undefined);
  }

  private join(socket: WebSocket, hello: Extract<ToCoordinator, { type: 'hello' }>): Peer | null {
    const { worldSize, version, configDigest, token } = this.options;
    const why =
      hello.protocol !== PROTOCOL_VERSION
        ? `protocol ${hello.protocol}, rank 0 speaks ${PROTOCOL_VERSION}: run the same servebench version everywhere`
        : hello.version !== version
          ? `servebench ${hello.version}, rank 0 runs ${version}: run the same version everywhere`
          : token !== undefined && hello.token !== token
            ? 'a wrong or missing SERVEBENCH_DIST_TOKEN: give every worker the same one'
            : hello.worldSize !== worldSize
              ? `world size ${hello.worldSize}, rank 0 has ${worldSize}: start every worker with the same --world-size`
              : hello.rank < 1 || hello.rank >= worldSize
                ? `rank ${hello.rank}, outside 1..${worldSize - 1}: check --rank`
                : this.peers.has(hello.rank)
                  ? `rank ${hello.rank}, which another worker (${this.peers.get(hello.rank)!.host}) already has: give each worker its own --rank`
                  : hello.configDigest !== configDigest
                    ? "settings that differ from rank 0's: start every worker with the same command line and files"
                    : null;
    if (why) {
      this.refuse(socket, `rank 0 refused this worker: it has ${why}`);
      return null;
    }
    const peer: Peer = {
      rank: hello.rank,
      host: hello.host,
      pid: hello.pid,
      socket,
      missed: 0,
      arrived: new Set(),
      records: new Map(),
      reports: new Map(),
      offsets: new Map(),
    };
    this.peers.set(peer.rank, peer);
    this.wake();
    return peer;
  }

  private handle(peer: Peer, message: ToCoordinator): void {
    switch (message.type) {
      case 'ping': {
        const t2 = this.options.clock.nowMs();
        this.send(peer.socket, { type: 'pong', seq: message.seq, t1: message.t1, t2, t3: this.options.clock.nowMs() });
        return;
      }
      case 'arrive':
        peer.arrived.add(message.key);
        break;
      case 'offset': {
        const o = peer.offsets.get(message.levelIndex) ?? {};
        o[message.when] = message.offset;
        peer.offsets.set(message.levelIndex, o);
        break;
      }
      case 'records': {
        const list = peer.records.get(message.levelIndex) ?? [];
        for (const r of message.records)
          list.push({ ...(r as unknown as RequestRecord), levelIndex: message.levelIndex });
        peer.records.set(message.levelIndex, list);
        break;
      }
      case 'done':
        peer.reports.set(message.report.levelIndex, { ...message.report, rank: peer.rank });
        break;
      case 'fail':
        for (const l of this.failListeners)
          l(`${workerName(peer.rank, peer.host)}: ${message.reason}`, message.exitCode);
        break;
      case 'bye':
        this.lose(peer, message.reason);
        break;
      case 'hello':
        return;
    }
    this.wake();
  }

  private lose(peer: Peer, reason: string): void {
    if (peer.lost !== undefined || this.ended) return;
    peer.lost = reason;
    peer.socket.terminate();
    for (const l of this.lostListeners) l(peer);
    this.wake();
  }

  private beat(): void {
    const beat = this.options.heartbeatMs ?? HEARTBEAT_MS;
    for (const peer of this.live()) {
      if (peer.missed >= HEARTBEAT_MISSES) {
        this.lose(peer, `it stopped answering (no heartbeat for ${Math.round((beat * HEARTBEAT_MISSES) / 1000)} s)`);
        continue;
      }
      peer.missed++;
      peer.socket.ping();
    }
  }

  private wake(): void {
    for (const w of [...this.waiters]) w.check();
  }

  /**
   * Resolves once `ready()` says so, re-checked on every message; rejects with what `failed()` returns, or after the
   * time-out with what `late()` says.
   */
  private wait<T>(
    ready: () => T | null,
    failed: () => Error | null,
    late: () => Error,
    signal: AbortSignal,
    timeoutMs = this.options.timeoutMs,
  ): Promise<T> {
    const done: Deferred<T> = deferred<T>();
    const stop = new AbortController();
    const waiter: Waiter = {
      check: () => {
        const error = signal.aborted ? new Error('cancelled') : failed();
        const value = error ? null : ready();
        if (!error && value === null) return;
        this.waiters.delete(waiter);
        stop.abort();
        if (error) done.reject(error);
        else done.resolve(value as T);
      },
    };
    this.waiters.add(waiter);
    const onAbort = (): void => waiter.check();
    signal.addEventListener('abort', onAbort, { once: true });
    void this.timer(timeoutMs, stop.signal).then(() => {
      if (stop.signal.aborted || !this.waiters.has(waiter)) return;
      this.waiters.delete(waiter);
      done.reject(late());
    });
    waiter.check();
    return done.promise.finally(() => signal.removeEventListener('abort', onAbort));
  }

  private missing(present: (p: Peer) => boolean): number[] {
    const out: number[] = [];
    for (let r = 1; r < this.options.worldSize; r++) {
      const p = this.peers.get(r);
      if (!p || !present(p)) out.push(r);
    }
    return out;
  }

  private names(ranks: number[]): string {
    return ranks.map((r) => workerName(r, this.peers.get(r)?.host)).join(', ');
  }

  private lostError(): Error | null {
    const gone = [...this.peers.values()].filter((p) => p.lost !== undefined);
    if (gone.length === 0) return null;
    const text = gone.map((p) => `${workerName(p.rank, p.host)} was lost: ${p.lost}`).join('; ');
    return new WorkerLostError(
      text,
      gone.map((p) => p.rank),
    );
  }

  /** Waits until every worker has joined; one line naming those missing after the time-out. */
  async waitForWorkers(signal: AbortSignal): Promise<void> {
    await this.wait(
      () => (this.missing(() => true).length === 0 ? true : null),
      () => this.lostError(),
      () => {
        const missing = this.missing(() => true);
        return new UserError(
          `rank 0 waited ${Math.round(this.options.timeoutMs / 1000)} s, and worker${missing.length > 1 ? 's' : ''} ${missing.join(', ')} of ${this.options.worldSize} never joined on port ${this.port}: check that every task was started, can reach this host, and runs the same command (or raise --barrier-timeout)`,
          1,
        );
      },
      signal,
    );
  }

  /** Largest best round trip the workers measured (ms), for the start margin. */
  maxRttMs(): number {
    let max = 0;
    for (const p of this.live())
      for (const o of p.offsets.values()) max = Math.max(max, o.before?.rttMs ?? 0, o.after?.rttMs ?? 0);
    return max;
  }

  /**
   * A barrier: resolves with the start instant (rank 0's clock) once every worker has arrived at `key`, after sending
   * it to them; rejects when a worker is lost or has not arrived within the time-out (naming it).
   */
  async barrier(key: string, signal: AbortSignal): Promise<number> {
    await this.wait(
      () => (this.missing((p) => p.arrived.has(key)).length === 0 ? true : null),
      () => this.lostError(),
      () => {
        const late = this.missing((p) => p.arrived.has(key));
        return new WorkerLostError(
          `${this.names(late)} did not reach the start of the batch within ${Math.round(this.options.timeoutMs / 1000)} s (raise --barrier-timeout if building its prompts takes longer)`,
          late,
        );
      },
      signal,
    );
    for (const p of this.live()) p.arrived.delete(key);
    // The instant must reach the farthest worker before it comes: a few of its round trips, at least 50 ms.
    const atMs = this.options.clock.nowMs() + Math.min(2000, Math.max(50, 20 + 4 * this.maxRttMs()));
    this.broadcast({ type: 'go', key, atMs });
    return atMs;
  }

  /**
   * Every live worker's report of a level (its records arrive before it on the same connection); a worker lost in
   * the meantime is left out. After a cut (`boundMs`), a worker that does not report in time is left out too.
   */
  async reports(
    levelIndex: number,
    signal: AbortSignal,
    boundMs = this.options.timeoutMs,
  ): Promise<Map<number, WorkerLevelReport>> {
    const collect = (): Map<number, WorkerLevelReport> => {
      const out = new Map<number, WorkerLevelReport>();
      for (const p of this.peers.values()) {
        const r = p.reports.get(levelIndex);
        if (r) out.set(p.rank, r);
      }
      return out;
    };
    try {
      return await this.wait(
        () => (this.live().every((p) => p.reports.has(levelIndex)) ? collect() : null),
        () => null,
        () => new Error('late'),
        signal,
        boundMs,
      );
    } catch {
      return collect();
    }
  }

  /** Takes (and forgets) the records a worker sent for a level. */
  takeRecords(levelIndex: number, rank: number): RequestRecord[] {
    const peer = this.peers.get(rank);
    const records = peer?.records.get(levelIndex) ?? [];
    peer?.records.delete(levelIndex);
    return records;
  }

  /** Tells every worker the run is over, then closes: a worker leaving after this is not lost. */
  async close(end?: Extract<ToWorker, { type: 'end' }>): Promise<void> {
    if (this.ended) return;
    if (end) this.broadcast(end);
    this.ended = true;
    clearInterval(this.heartbeat);
    for (const w of [...this.waiters]) w.check();
    // Let the end message reach the workers before the sockets close under it.
    await Promise.all(
      [...this.peers.values()].map(
        (p) =>
          new Promise<void>((resolve) => {
            if (p.socket.readyState !== p.socket.OPEN) return resolve();
            p.socket.once('close', () => resolve());
            p.socket.close(1000, 'run over');
            setTimeout(() => {
              p.socket.terminate();
              resolve();
            }, 2000).unref();
          }),
      ),
    );
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
