import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { startUiServer } from '../../src/core/ui-server/index.js';
import type { UiServer } from '../../src/core/ui-server/index.js';
import type { ServebenchBridge } from '../../src/preload/bridge.js';
import { createApi, createIpcTransport, createWsTransport, pickTransport } from '../../src/renderer/lib/transport.js';
import type { SocketLike, WsTransport } from '../../src/renderer/lib/transport.js';
import type { ContractEvent } from '../../src/shared/contract.js';
import { FakeService } from '../fakes/fake-service.js';

const connect = (url: string): SocketLike => new WebSocket(url) as unknown as SocketLike;

/** Collects values as they arrive; `next()` resolves with the first one after it was called (no polling, no time limit but the test's). */
function arrivals<T>(): { all: T[]; add: (x: T) => void; next: () => Promise<T> } {
  const all: T[] = [];
  const waiting: Array<(x: T) => void> = [];
  return {
    all,
    add: (x) => {
      all.push(x);
      for (const w of waiting.splice(0)) w(x);
    },
    next: () => new Promise<T>((resolve) => waiting.push(resolve)),
  };
}

describe('WebSocket transport against the ui server (fake service)', () => {
  let dir: string;
  let service: FakeService;
  let server: UiServer;
  const transports: WsTransport[] = [];
  const open = (onStatus?: (up: boolean) => void): WsTransport => {
    const t = createWsTransport(`ws://127.0.0.1:${server.port}/rpc?token=${server.token}`, {
      connect,
      reconnectMs: 20,
      onStatus,
    });
    transports.push(t);
    return t;
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sb-transport-'));
    await writeFile(join(dir, 'index.html'), '');
    service = new FakeService();
    server = await startUiServer({ service, port: 0, staticDir: dir });
  });
  afterEach(async () => {
    for (const t of transports.splice(0)) t.close();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('round-trips typed calls made before the socket opened', async () => {
    const api = createApi(open());
    const [presets, runs, active] = await Promise.all([api.listPresets(), api.listRuns(), api.activeRun()]);
    expect(presets).toEqual([{ name: 'sim-demo', description: 'the simulator' }]);
    expect(runs).toEqual([]);
    expect(active).toBeNull();
    expect(service.calls.map((c) => c.method).sort()).toEqual(['activeRun', 'listPresets', 'listRuns']);
  });

  it('rejects with the one-line message: validation errors and user errors alike', async () => {
    const api = createApi(open());
    await expect(api.startRun({ concurrency: [0] })).rejects.toThrow(/^concurrency\.0: /);
    await expect(api.getRun('nope')).rejects.toThrow('run nope not found');
    await api.startRun({ concurrency: [1] });
    await expect(api.startRun({ concurrency: [1] })).rejects.toThrow(
      'run r1 is still going; cancel it or wait for it to finish',
    );
  });

  it('delivers pushed events to every listener until it unsubscribes', async () => {
    const t = open();
    const api = createApi(t);
    const seen: ContractEvent[] = [];
    const other = arrivals<ContractEvent>();
    const off = t.onEvent((e) => seen.push(e));
    t.onEvent(other.add);
    const started = other.next();
    await api.startRun({ concurrency: [1, 2] });
    expect((await started).type).toBe('run-started');
    expect(seen.map((e) => e.type)).toEqual(['run-started']); // both listeners get an event together
    off();
    const hello = other.next();
    service.emit({ type: 'message', severity: 'info', text: 'hello' });
    expect(await hello).toMatchObject({ type: 'message', text: 'hello' });
    expect(other.all).toHaveLength(2);
    expect(seen).toHaveLength(1);
  });

  it('delivers events the server sent together in one frame, each in order', async () => {
    const t = open();
    await createApi(t).listRuns();
    const seen = arrivals<ContractEvent>();
    t.onEvent(seen.add);
    const texts = Array.from({ length: 50 }, (_, i) => `burst ${i}`);
    const last = new Promise<void>((resolve) =>
      t.onEvent((e) => e.type === 'message' && e.text === 'burst 49' && resolve()),
    );
    for (const text of texts) service.emit({ type: 'message', severity: 'info', text });
    await last;
    expect(seen.all.map((e) => (e.type === 'message' ? e.text : e.type))).toEqual(texts);
  });

  it('fails calls in flight when the connection drops, reports it, and reconnects', async () => {
    const status = arrivals<boolean>();
    const t = open(status.add);
    const api = createApi(t);
    await api.listRuns();
    const port = server.port;
    const down = status.next();
    await server.close();
    expect(await down).toBe(false);
    expect(status.all).toEqual([true, false]);
    await expect(api.listRuns()).rejects.toThrow(/connection to servebench was lost/);
    const up = status.next();
    server = await startUiServer({ service, port, staticDir: dir, token: server.token });
    expect(await up).toBe(true); // reconnected on its own; failed retries in between report nothing new
    expect(status.all).toEqual([true, false, true]);
    expect(await api.listPresets()).toHaveLength(1);
  });
});

describe('IPC transport and the choice between them', () => {
  function fakeBridge(): ServebenchBridge & { listeners: Set<(e: ContractEvent) => void> } {
    const listeners = new Set<(e: ContractEvent) => void>();
    return {
      listeners,
      call: vi.fn(async (method: string, args: unknown[]) => {
        if (method === 'getRun') throw new Error(`run ${String(args[0])} not found`);
        return { method, args };
      }),
      onEvent: (l) => {
        listeners.add(l);
        return () => listeners.delete(l);
      },
    };
  }

  it('calls through window.servebench and passes its events on', async () => {
    const bridge = fakeBridge();
    const t = createIpcTransport(bridge);
    const api = createApi(t);
    expect(await api.cancelRun('r1')).toEqual({ method: 'cancelRun', args: ['r1'] });
    await expect(api.getRun('x')).rejects.toThrow('run x not found');
    const got: ContractEvent[] = [];
    const off = t.onEvent((e) => got.push(e));
    for (const l of bridge.listeners) l({ type: 'server-state', state: 'ready' });
    off();
    expect(got).toEqual([{ type: 'server-state', state: 'ready' }]);
    expect(bridge.listeners.size).toBe(0);
  });

  it('picks IPC when the preload bridge exists, else a WebSocket to this page host /rpc', () => {
    const bridge = fakeBridge();
    const ipc = pickTransport({ servebench: bridge, location: { host: 'x' } });
    void createApi(ipc).listRuns();
    expect(bridge.call).toHaveBeenCalledWith('listRuns', []);

    const urls: string[] = [];
    const fakeSocket = (url: string): SocketLike => {
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
    };
    const ws = pickTransport({ servebench: undefined, location: { host: '127.0.0.1:5199' } }, { connect: fakeSocket });
    expect(urls).toEqual(['ws://127.0.0.1:5199/rpc']);
    (ws as WsTransport).close();
  });
});
