import { describe, expect, it, vi } from 'vitest';
import type { ServebenchBridge } from '../../src/preload/bridge.js';
import { TOKEN_STORAGE_KEY, createIpcTransport, pickTransport, takeToken } from '../../src/renderer/lib/transport.js';
import type { SocketLike, TokenWindow, WsTransport } from '../../src/renderer/lib/transport.js';
import type { ContractEvent } from '../../src/shared/contract.js';

/** A window at `href` with a sessionStorage and a history that records the address it was given. */
function fakeWindow(
  href: string,
  stored: Record<string, string> = {},
): TokenWindow & { shown: string[]; stored: Record<string, string> } {
  const url = new URL(href);
  const shown: string[] = [];
  return {
    shown,
    stored,
    location: { host: url.host, search: url.search, href },
    history: { replaceState: (_d, _u, to) => shown.push(String(to)) },
    sessionStorage: {
      getItem: (k) => stored[k] ?? null,
      setItem: (k, v) => {
        stored[k] = v;
      },
    },
  };
}

const sockets = (): { urls: string[]; connect: (url: string) => SocketLike } => {
  const urls: string[] = [];
  return {
    urls,
    connect: (url) => {
      urls.push(url);
      return {
        readyState: 0,
        send: () => undefined,
        close: () => undefined,
        onopen: null,
        onclose: null,
        onerror: null,
        onmessage: null,
      };
    },
  };
};

describe('the token of servebench ui in the page', () => {
  it('moves ?token= from the address into sessionStorage, strips it from the address bar, and sends it on /rpc', () => {
    const win = fakeWindow('http://127.0.0.1:5199/?token=abc-123_XYZ&view=runs#top');
    const s = sockets();
    const t = pickTransport(win, { connect: s.connect }) as WsTransport;
    expect(s.urls).toEqual(['ws://127.0.0.1:5199/rpc?token=abc-123_XYZ']);
    expect(win.stored[TOKEN_STORAGE_KEY]).toBe('abc-123_XYZ');
    expect(win.shown).toEqual(['/?view=runs#top']);
    t.close();
  });

  it('a reload (no token in the address any more) uses the one this tab kept', () => {
    const win = fakeWindow('http://127.0.0.1:5199/', { [TOKEN_STORAGE_KEY]: 'kept' });
    expect(takeToken(win)).toBe('kept');
    expect(win.shown).toEqual([]);
  });

  it('without a token anywhere it connects without one (the server then refuses it with 403)', () => {
    const s = sockets();
    const t = pickTransport(fakeWindow('http://127.0.0.1:5199/'), { connect: s.connect }) as WsTransport;
    expect(s.urls).toEqual(['ws://127.0.0.1:5199/rpc']);
    t.close();
  });

  it('a page where sessionStorage throws (storage off) still gets the token from its address', () => {
    const win = fakeWindow('http://127.0.0.1:5199/?token=t1');
    win.sessionStorage = {
      getItem: () => {
        throw new Error('denied');
      },
      setItem: () => {
        throw new Error('denied');
      },
    };
    expect(takeToken(win)).toBe('t1');
  });
});

describe('the Electron window gets the live run replayed too', () => {
  it('a new listener over IPC first gets liveEvents, then pushed events', async () => {
    const pushed = new Set<(e: ContractEvent) => void>();
    const replay: ContractEvent[] = [
      { type: 'run-started', runId: 'r1', dir: '/r1', simulated: true, totalLevels: 1 },
      { type: 'server-state', state: 'ready' },
    ];
    const bridge: ServebenchBridge = {
      call: vi.fn(async (method: string) => (method === 'liveEvents' ? replay : null)),
      onEvent: (l) => {
        pushed.add(l);
        return () => pushed.delete(l);
      },
    };
    const got: ContractEvent[] = [];
    const off = createIpcTransport(bridge).onEvent((e) => got.push(e));
    await vi.waitFor(() => expect(got).toHaveLength(2), { timeout: 30_000 });
    expect(got).toEqual(replay);
    for (const l of pushed) l({ type: 'message', severity: 'info', text: 'new' });
    expect(got.at(-1)).toEqual({ type: 'message', severity: 'info', text: 'new' });
    off();
    expect(pushed.size).toBe(0);
    expect(bridge.call).toHaveBeenCalledWith('liveEvents', []);
  });
});
