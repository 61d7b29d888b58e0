import type { ContractEvent } from '../../shared/contract.js';

/** What the fan-out needs of a client socket (ws's WebSocket has it). */
export interface FanoutSocket {
  readonly readyState: number;
  readonly OPEN: number;
  /** Bytes queued for this client and not yet handed to the kernel. */
  readonly bufferedAmount: number;
  send(data: Buffer, options: { binary: false }, cb: (error?: Error) => void): void;
  terminate(): void;
}

/** Timers, injected so tests drive the fan-out turn by turn. */
export interface FanoutTimers {
  /** Runs `fn` after `ms` (0: on the next turn); returns a cancel. */
  later(fn: () => void, ms: number): () => void;
  nowMs(): number;
}

export interface FanoutOptions {
  /** Least ms between two frames: the events in between go out together, in one frame per client. */
  intervalMs?: number;
  /** More ms between frames per client connected: the writes per second stay bounded however many viewers come. */
  intervalPerClientMs?: number;
  /** Most request-done events of one level per frame (evenly picked, the last always): the live chart's points. */
  pointsPerFrame?: number;
  /**
   * Unread bytes a client may hold beyond its replay before it is dropped (it reconnects and replays); with the
   * frame in hand it holds at most this and one frame, and a frame's bytes are shared by every client sent it.
   */
  maxUnreadBytes?: number;
  /** Clients written per event-loop turn: a flush to hundreds of clients never blocks the loop in one piece. */
  clientsPerTurn?: number;
  /** Events per replay frame. */
  replayFrameEvents?: number;
  timers?: FanoutTimers;
  /** Told when a client is dropped, one line. */
  onDrop?: (line: string) => void;
}

const realTimers: FanoutTimers = {
  later(fn, ms) {
    const timer = ms > 0 ? setTimeout(fn, ms) : setImmediate(fn);
    return () => (ms > 0 ? clearTimeout(timer as NodeJS.Timeout) : clearImmediate(timer as NodeJS.Immediate));
  },
  nowMs: () => performance.now(),
};

interface Client {
  ws: FanoutSocket;
  /** The first event sequence number this client has not been sent (its replay covered those before). */
  from: number;
  /** Unread bytes it may hold: its replay plus maxUnreadBytes. */
  allowance: number;
}

/** One frame: `{event}` for a single event, `{events: [...]}` for several (the renderer's transport reads both). */
function frame(texts: readonly string[]): Buffer {
  return Buffer.from(texts.length === 1 ? `{"event":${texts[0]}}` : `{"events":[${texts.join(',')}]}`);
}

/**
 * A frame's events with each level's request-done events cut to `max`, evenly picked and the last kept (it carries
 * the level's done, total and failed counts): a viewer's live chart needs points, not every request of a busy run
 * (the run record has them all). Every other event is kept, in order.
 */
function thinned<T extends { event: ContractEvent }>(batch: T[], max: number): T[] {
  const perLevel = new Map<number, number>();
  for (const { event } of batch) {
    if (event.type === 'request-done') perLevel.set(event.levelIndex, (perLevel.get(event.levelIndex) ?? 0) + 1);
  }
  if ([...perLevel.values()].every((n) => n <= max)) return batch;
  const seen = new Map<number, number>();
  return batch.filter(({ event }) => {
    if (event.type !== 'request-done') return true;
    const n = perLevel.get(event.levelIndex)!;
    const i = seen.get(event.levelIndex) ?? 0;
    seen.set(event.levelIndex, i + 1);
    // i * max / n crosses an integer exactly `max` times over the n events; the last always goes.
    return i === n - 1 || Math.floor(((i + 1) * max) / n) > Math.floor((i * max) / n);
  });
}

/**
 * Pushes the service's events to every viewer without charging the run for them: an event costs the measuring loop
 * one array push; at most every intervalMs (longer with many viewers: about one write per client per ms) the events
 * since the last frame, their request-done points thinned, are serialised once and written to the clients a slice
 * per turn; a client whose unread bytes pass its allowance is dropped (and reconnects), so a viewer that never reads
 * holds bounded memory and costs nothing once gone.
 */
export class EventFanout {
  private readonly clients = new Map<FanoutSocket, Client>();
  /** Each event is serialised once, however many clients and replays send it. */
  private readonly texts = new WeakMap<ContractEvent, string>();
  private pending: Array<{ seq: number; event: ContractEvent }> = [];
  private nextSeq = 0;
  private lastFlushMs = -Infinity;
  private cancelFlush: (() => void) | null = null;
  private flushing = false;
  private readonly intervalMs: number;
  private readonly perClientMs: number;
  private readonly points: number;
  private readonly maxUnread: number;
  private readonly perTurn: number;
  private readonly replayFrame: number;
  private readonly timers: FanoutTimers;

  constructor(private readonly options: FanoutOptions = {}) {
    this.intervalMs = options.intervalMs ?? 100;
    this.perClientMs = options.intervalPerClientMs ?? 1;
    this.points = options.pointsPerFrame ?? 50;
    this.maxUnread = options.maxUnreadBytes ?? 1 << 20;
    this.perTurn = options.clientsPerTurn ?? 64;
    this.replayFrame = options.replayFrameEvents ?? 500;
    this.timers = options.timers ?? realTimers;
  }

  /** Clients connected. */
  get size(): number {
    return this.clients.size;
  }

  /** Adds a client: sends it `replay` (the run so far), then every event pushed from now on. Returns its removal. */
  add(ws: FanoutSocket, replay: readonly ContractEvent[]): () => void {
    let replayBytes = 0;
    for (let i = 0; i < replay.length; i += this.replayFrame) {
      const data = frame(replay.slice(i, i + this.replayFrame).map((e) => this.text(e)));
      replayBytes += data.length;
      this.write({ ws, allowance: Infinity }, data);
    }
    const client: Client = { ws, from: this.nextSeq, allowance: replayBytes + this.maxUnread };
    this.clients.set(ws, client);
    return () => {
      if (this.clients.get(ws) === client) this.clients.delete(ws);
    };
  }

  /** One event from the service: queued for the next frame (nothing is written on the caller's time). */
  push(event: ContractEvent): void {
    if (this.clients.size === 0) {
      this.nextSeq++;
      return;
    }
    this.pending.push({ seq: this.nextSeq++, event });
    this.schedule();
  }

  /** Writes `data` to one client unless it is gone or too far behind (then it is dropped). */
  write(client: Pick<Client, 'ws' | 'allowance'>, data: Buffer): void {
    const { ws } = client;
    if (ws.readyState !== ws.OPEN) return;
    // Judged on what it has not read yet: one frame larger than the allowance still reaches a client that reads.
    if (ws.bufferedAmount > client.allowance) {
      this.options.onDrop?.(
        `ui server: dropped a client that stopped reading (${ws.bufferedAmount} bytes unread); it may reconnect`,
      );
      ws.terminate();
      return;
    }
    ws.send(data, { binary: false }, (error) => {
      if (error) ws.terminate();
    });
  }

  /** Writes one answer to one client, held to the same allowance as its events. */
  sendTo(ws: FanoutSocket, text: string): void {
    this.write({ ws, allowance: this.clients.get(ws)?.allowance ?? this.maxUnread }, Buffer.from(text));
  }

  close(): void {
    this.cancelFlush?.();
    this.cancelFlush = null;
    this.pending = [];
    this.clients.clear();
  }

  private text(event: ContractEvent): string {
    let text = this.texts.get(event);
    if (text === undefined) {
      text = JSON.stringify(event);
      this.texts.set(event, text);
    }
    return text;
  }

  private schedule(): void {
    if (this.cancelFlush || this.flushing) return;
    const interval = Math.max(this.intervalMs, this.clients.size * this.perClientMs);
    const wait = Math.max(0, this.lastFlushMs + interval - this.timers.nowMs());
    this.cancelFlush = this.timers.later(() => {
      this.cancelFlush = null;
      this.flush();
    }, wait);
  }

  private flush(): void {
    const batch = thinned(this.pending, this.points);
    this.pending = [];
    this.lastFlushMs = this.timers.nowMs();
    if (batch.length === 0) return;
    const texts = batch.map((p) => this.text(p.event));
    const first = batch[0]!.seq;
    const whole = frame(texts);
    const targets = [...this.clients.values()];
    this.flushing = true;
    const slice = (at: number): void => {
      for (const client of targets.slice(at, at + this.perTurn)) {
        if (this.clients.get(client.ws) !== client) continue;
        // A client that joined during this batch got the batch's first events in its replay.
        if (client.from <= first) this.write(client, whole);
        else {
          const rest = batch.flatMap((p, i) => (p.seq >= client.from ? [texts[i]!] : []));
          if (rest.length > 0) this.write(client, frame(rest));
        }
      }
      if (at + this.perTurn < targets.length) {
        this.timers.later(() => slice(at + this.perTurn), 0);
        return;
      }
      this.flushing = false;
      if (this.pending.length > 0) this.schedule();
    };
    slice(0);
  }
}
