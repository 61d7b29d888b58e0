import { WebSocket } from 'ws';
import type { Clock } from '../clock.js';
import { UserError } from '../errors.js';
import type { PingSample } from './clock-sync.js';
import {
  HEARTBEAT_MISSES,
  HEARTBEAT_MS,
  MAX_FRAME_BYTES,
  PROTOCOL_VERSION,
  ToWorkerSchema,
  parseFrame,
  type ToCoordinator,
  type ToWorker,
} from './protocol.js';
import { deferred, realTimer, type Deferred, type Timer } from './waiting.js';

/** What rank 0 asks a worker to do next. */
export type WorkerCommand = Extract<ToWorker, { type: 'server' | 'level' | 'end' }>;
type Welcome = Extract<ToWorker, { type: 'welcome' }>;

/** How a worker reaches rank 0. */
export interface WorkerLinkOptions {
  host: string;
  port: number;
  hello: {
    version: string;
    rank: number;
    worldSize: number;
    configDigest: string;
    host: string;
    pid: number;
    token?: string;
  };
  clock: Clock;
  /** How long to keep trying while rank 0 is not up yet (it may start after its workers). */
  connectTimeoutMs: number;
  /** How long a ping may take before rank 0 counts as gone. */
  pingTimeoutMs?: number;
  heartbeatMs?: number;
  timer?: Timer;
  signal?: AbortSignal;
}

/** Rank 0 is gone (its connection closed or stopped answering): the worker stops and says so. */
export class CoordinatorLostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CoordinatorLostError';
  }
}

/** Opens one WebSocket and resolves with it once open; rejects on refusal or error. */
function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { maxPayload: MAX_FRAME_BYTES, handshakeTimeout: 10_000 });
    socket.once('open', () => resolve(socket));
    socket.once('error', reject);
  });
}

/**
 * A worker's side of the rendezvous: joins rank 0 (retrying while it starts), then queues its commands, answers its
 * start instants, times clock pings and carries records and reports back. Rank 0's loss rejects every wait at once.
 */
export class WorkerLink {
  private readonly commands: WorkerCommand[] = [];
  private commandWaiter: Deferred<WorkerCommand> | null = null;
  private readonly goes = new Map<string, Deferred<number>>();
  private readonly pongs = new Map<number, Deferred<PingSample>>();
  private readonly abortListeners: Array<(reason: string) => void> = [];
  private seq = 0;
  private lostError: CoordinatorLostError | null = null;
  private closing = false;
  private missed = 0;
  private readonly heartbeat: NodeJS.Timeout;

  private constructor(
    private readonly socket: WebSocket,
    readonly welcome: Welcome,
    private readonly options: WorkerLinkOptions,
    private readonly where: string,
  ) {
    socket.on('message', (data) => this.receive(data));
    socket.on('pong', () => (this.missed = 0));
    socket.on('close', (code) => this.lose(`its connection closed (code ${code})`));
    socket.on('error', () => undefined);
    const beat = options.heartbeatMs ?? HEARTBEAT_MS;
    this.heartbeat = setInterval(() => {
      if (this.missed >= HEARTBEAT_MISSES) {
        return this.lose(`it stopped answering (no heartbeat for ${Math.round((beat * HEARTBEAT_MISSES) / 1000)} s)`);
      }
      this.missed++;
      socket.ping();
    }, beat);
    this.heartbeat.unref();
  }

  /** Joins rank 0: retries a refused connection until the time-out; a refusal by rank 0 itself is final. */
  static async connect(options: WorkerLinkOptions): Promise<WorkerLink> {
    const where = `${options.host.includes(':') ? `[${options.host}]` : options.host}:${options.port}`;
    const url = `ws://${where}/`;
    const timer = options.timer ?? realTimer;
    const deadline = options.clock.nowMs() + options.connectTimeoutMs;
    for (;;) {
      if (options.signal?.aborted) throw new UserError('cancelled before rank 0 was reached', 130);
      let socket: WebSocket | null = null;
      try {
        socket = await open(url);
      } catch {
        if (options.clock.nowMs() >= deadline) {
          throw new UserError(
            `rank 0 at ${where} did not answer within ${Math.round(options.connectTimeoutMs / 1000)} s: check that rank 0 runs and that this host can reach it (--coordinator HOST:PORT)`,
            1,
          );
        }
        await timer(500, options.signal ?? new AbortController().signal);
        continue;
      }
      const welcome = await WorkerLink.handshake(socket, options, where);
      return new WorkerLink(socket, welcome, options, where);
    }
  }

  private static handshake(socket: WebSocket, options: WorkerLinkOptions, where: string): Promise<Welcome> {
    return new Promise((resolve, reject) => {
      socket.on('message', function first(data) {
        const message = parseFrame(ToWorkerSchema, data);
        if (message?.type === 'welcome') {
          socket.off('message', first);
          resolve(message);
        } else if (message?.type === 'reject') reject(new UserError(message.reason, 2));
        else if (message?.type === 'end')
          reject(
            new UserError(`rank 0 at ${where} ended the run before it began: ${message.reason ?? message.status}`, 1),
          );
      });
      socket.once('close', () =>
        reject(new UserError(`rank 0 at ${where} closed the connection before it welcomed this worker`, 1)),
      );
      const hello: ToCoordinator = { type: 'hello', protocol: PROTOCOL_VERSION, ...options.hello };
      socket.send(JSON.stringify(hello));
    });
  }

  /** Rank 0's address, for messages. */
  get coordinator(): string {
    return this.where;
  }

  /** True once rank 0 is gone. */
  get lost(): CoordinatorLostError | null {
    return this.lostError;
  }

  private receive(data: unknown): void {
    const message = parseFrame(ToWorkerSchema, data);
    if (!message) return this.lose('it sent a frame that is not of this protocol');
    switch (message.type) {
      case 'pong': {
        const t4 = this.options.clock.nowMs();
        this.pongs.get(message.seq)?.resolve({ t1: message.t1, t2: message.t2, t3: message.t3, t4 });
        this.pongs.delete(message.seq);
        return;
      }
      case 'go': {
        const d = this.goes.get(message.key) ?? deferred<number>();
        this.goes.set(message.key, d);
        d.resolve(message.atMs);
        return;
      }
      case 'abort':
        for (const l of this.abortListeners) l(message.reason);
        return;
      case 'server':
      case 'level':
      case 'end':
        if (message.type === 'end') this.closing = true;
        if (this.commandWaiter) {
          this.commandWaiter.resolve(message);
          this.commandWaiter = null;
        } else this.commands.push(message);
        return;
      default:
        return;
    }
  }

  private lose(why: string): void {
    if (this.lostError || this.closing) return;
    this.lostError = new CoordinatorLostError(`rank 0 at ${this.where} was lost: ${why}`);
    clearInterval(this.heartbeat);
    this.socket.terminate();
    for (const l of this.abortListeners) l(this.lostError.message);
    this.commandWaiter?.reject(this.lostError);
    for (const d of this.goes.values()) d.reject(this.lostError);
    for (const d of this.pongs.values()) d.reject(this.lostError);
  }

  /** Called when rank 0 cuts the level short (a worker lost, a cancel) or is itself lost; returns the unsubscribe. */
  onAbort(listener: (reason: string) => void): () => void {
    this.abortListeners.push(listener);
    return () => {
      const i = this.abortListeners.indexOf(listener);
      if (i >= 0) this.abortListeners.splice(i, 1);
    };
  }

  /** The next command of rank 0 (start a server session, run a level, end). */
  next(): Promise<WorkerCommand> {
    if (this.lostError) return Promise.reject(this.lostError);
    const queued = this.commands.shift();
    if (queued) return Promise.resolve(queued);
    this.commandWaiter = deferred<WorkerCommand>();
    return this.commandWaiter.promise;
  }

  /** Sends a message to rank 0 (dropped once it is gone). */
  send(message: ToCoordinator): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(JSON.stringify(message));
  }

  /** One clock ping: its four times. */
  ping(): Promise<PingSample> {
    if (this.lostError) return Promise.reject(this.lostError);
    const seq = this.seq++;
    const d = deferred<PingSample>();
    this.pongs.set(seq, d);
    this.send({ type: 'ping', seq, t1: this.options.clock.nowMs() });
    const stop = new AbortController();
    void (this.options.timer ?? realTimer)(this.options.pingTimeoutMs ?? 10_000, stop.signal).then(() => {
      if (stop.signal.aborted) return;
      this.lose(`a clock ping got no answer within ${Math.round((this.options.pingTimeoutMs ?? 10_000) / 1000)} s`);
    });
    return d.promise.finally(() => stop.abort());
  }

  /** Arrives at barrier `key`; resolves with the start instant rank 0 announced (rank 0's clock). */
  arrive(key: string): Promise<number> {
    if (this.lostError) return Promise.reject(this.lostError);
    const d = this.goes.get(key) ?? deferred<number>();
    this.goes.set(key, d);
    this.send({ type: 'arrive', key });
    const started = d.promise.finally(() => this.goes.delete(key));
    // The level may end (rank 0 lost) with nobody awaiting its next start any more.
    started.catch(() => undefined);
    return started;
  }

  /** Leaves: tells rank 0 why (unless the run is over), then closes. */
  close(reason?: string): void {
    if (reason && !this.lostError && !this.closing) this.send({ type: 'bye', reason });
    this.closing = true;
    clearInterval(this.heartbeat);
    this.socket.close(1000, 'worker done');
  }
}
