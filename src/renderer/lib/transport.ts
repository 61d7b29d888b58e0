import type { ContractEvent, ContractMethod, ServebenchContract } from '../../shared/contract.js';
import type { ServebenchBridge } from '../../preload/bridge.js';

/** What a method resolves to. */
type ResultOf<M extends ContractMethod> = Awaited<ReturnType<ServebenchContract[M]>>;
/** A method's arguments, as a list. */
type ArgsOf<M extends ContractMethod> = Parameters<ServebenchContract[M]>;

/** The renderer's one door to the engine; IPC in Electron, a WebSocket in `servebench ui`. */
export interface Transport {
  call<M extends ContractMethod>(method: M, args: ArgsOf<M>): Promise<ResultOf<M>>;
  /** Returns the function that unsubscribes. */
  onEvent(listener: (event: ContractEvent) => void): () => void;
}

/** The contract as plain async functions: `api.getRun(id)`. */
export type Api = { [M in ContractMethod]: (...args: ArgsOf<M>) => Promise<ResultOf<M>> };

declare global {
  interface Window {
    servebench?: ServebenchBridge;
  }
}

/**
 * Transport over the preload bridge (`window.servebench`). A new listener first gets the run in progress
 * (`liveEvents`), so a reloaded window rebuilds its live view as a reconnected WebSocket page does.
 */
export function createIpcTransport(bridge: ServebenchBridge): Transport {
  return {
    call: (method, args) => bridge.call(method, args as unknown[]) as Promise<never>,
    onEvent: (listener) => {
      let subscribed = true;
      const off = bridge.onEvent(listener);
      // Events pushed before the answer are in it too; its run-started resets the view, so none counts twice.
      bridge.call('liveEvents', []).then(
        (events) => {
          if (subscribed && Array.isArray(events)) for (const event of events as ContractEvent[]) listener(event);
        },
        () => undefined,
      );
      return () => {
        subscribed = false;
        off();
      };
    },
  };
}

/** The subset of the browser's WebSocket the transport needs (the `ws` package has it too, for tests). */
export interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(): void;
  onopen: ((ev: unknown) => void) | null;
  onclose: ((ev: unknown) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
}

export interface WsTransportOptions {
  /** Creates the socket; default `new WebSocket(url)`. */
  connect?: (url: string) => SocketLike;
  /** Delay before reconnecting after the socket closed, ms (default 1000). */
  reconnectMs?: number;
  /** Told when the connection opens or drops, for a "disconnected" banner. */
  onStatus?: (connected: boolean) => void;
}

/** A WebSocket transport with the handle to close it for good. */
export interface WsTransport extends Transport {
  close(): void;
}

const OPEN = 1;

/**
 * Transport over a WebSocket: `{id, method, args}` out, `{id, result}` or `{id, error}` back, `{event}` pushed.
 * Calls made while connecting wait; a dropped connection fails the calls in flight and reconnects.
 */
export function createWsTransport(url: string, options: WsTransportOptions = {}): WsTransport {
  const connect = options.connect ?? ((u: string) => new WebSocket(u) as unknown as SocketLike);
  const reconnectMs = options.reconnectMs ?? 1000;
  const listeners = new Set<(event: ContractEvent) => void>();
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let queue: string[] = [];
  let nextId = 1;
  let closed = false;
  let socket: SocketLike;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let connected: boolean | null = null;
  const report = (up: boolean): void => {
    if (connected === up) return;
    connected = up;
    options.onStatus?.(up);
  };

  const open = (): void => {
    socket = connect(url);
    socket.onopen = () => {
      report(true);
      const waiting = queue;
      queue = [];
      for (const text of waiting) socket.send(text);
    };
    socket.onmessage = (ev) => {
      let message: {
        id?: number | null;
        result?: unknown;
        error?: string;
        event?: ContractEvent;
        events?: ContractEvent[];
      };
      try {
        message = JSON.parse(String(ev.data)) as typeof message;
      } catch {
        return;
      }
      // Pushed events come one to a frame, or several together (the server batches them while a run is busy).
      const events = message.event ? [message.event] : Array.isArray(message.events) ? message.events : null;
      if (events) {
        for (const event of events) for (const l of listeners) l(event);
        return;
      }
      if (typeof message.id !== 'number') return;
      const call = pending.get(message.id);
      if (!call) return;
      pending.delete(message.id);
      if (message.error !== undefined) call.reject(new Error(message.error));
      else call.resolve(message.result);
    };
    socket.onerror = () => undefined;
    socket.onclose = () => {
      report(false);
      for (const call of pending.values()) call.reject(new Error('the connection to servebench was lost'));
      pending.clear();
      queue = [];
      if (!closed) timer = setTimeout(open, reconnectMs);
    };
  };
  open();

  return {
    call(method, args) {
      if (closed) return Promise.reject(new Error('the transport is closed'));
      const id = nextId++;
      const text = JSON.stringify({ id, method, args });
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        if (socket.readyState === OPEN) socket.send(text);
        else queue.push(text);
      });
    },
    onEvent(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      socket.close();
    },
  };
}

/** Where `servebench ui` keeps its token for this tab (a reload keeps it; the address bar does not show it). */
export const TOKEN_STORAGE_KEY = 'servebench.token';

/** The parts of `window` the token handling uses (all optional: tests and odd hosts may lack them). */
export interface TokenWindow {
  location: { host: string; search?: string; href?: string };
  history?: { replaceState(data: unknown, unused: string, url?: string): void };
  sessionStorage?: { getItem(key: string): string | null; setItem(key: string, value: string): void };
}

/**
 * The token of `servebench ui` (printed in its URL as `?token=...`): moved from the address into this
 * tab's sessionStorage and stripped from the address bar (so it is not in history, bookmarks or screenshots).
 */
export function takeToken(win: TokenWindow): string | null {
  let token: string | null = null;
  try {
    const url = new URL(win.location.href ?? `http://${win.location.host}/${win.location.search ?? ''}`);
    token = url.searchParams.get('token');
    if (token) {
      win.sessionStorage?.setItem(TOKEN_STORAGE_KEY, token);
      url.searchParams.delete('token');
      win.history?.replaceState(null, '', `${url.pathname}${url.search}${url.hash}`);
    }
  } catch {
    // no usable address: fall back to what this tab kept
  }
  try {
    return token ?? win.sessionStorage?.getItem(TOKEN_STORAGE_KEY) ?? null;
  } catch {
    return token;
  }
}

/** IPC when the preload bridge is there (Electron), else the WebSocket of `servebench ui` on this page's host, with its token. */
export function pickTransport(
  win: TokenWindow & { servebench?: ServebenchBridge },
  options?: WsTransportOptions,
): Transport {
  if (win.servebench) return createIpcTransport(win.servebench);
  const token = takeToken(win);
  const query = token ? `?token=${encodeURIComponent(token)}` : '';
  return createWsTransport(`ws://${win.location.host}/rpc${query}`, options);
}

/** Typed functions over a transport; method names come from the contract's type (no runtime import). */
export function createApi(transport: Transport): Api {
  return new Proxy({} as Api, {
    get(_target, method) {
      if (typeof method !== 'string') return undefined;
      return (...args: unknown[]) => transport.call(method as ContractMethod, args as never);
    },
  });
}
