import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { OpenDialogOptions } from 'electron';

vi.mock('electron', () => import('./fake-ipc-main.js'));
const { handlers } = await import('./fake-ipc-main.js');

const { registerContractIpc } = await import('../../src/main/ipc.js');
const { createFilePicker, openDialogOptions } = await import('../../src/main/pick-file.js');
const { callChannel } = await import('../../src/preload/bridge.js');

const sender = { sender: { id: 1 } };

/** Main with the open dialog faked: it answers the given picks in turn (undefined: cancelled). */
function setup(picks: Array<string | undefined>) {
  const engine = { call: vi.fn(), onEvent: () => () => undefined };
  const show = vi.fn(async (_options: OpenDialogOptions) => {
    const path = picks.shift();
    return path === undefined ? { canceled: true, filePaths: [] } : { canceled: false, filePaths: [path] };
  });
  registerContractIpc({
    engine,
    targets: () => [],
    trusted: (e) => (e as unknown as typeof sender).sender.id === 1,
    local: { pickFile: createFilePicker(show).pickFile },
  });
  const pick = (...args: unknown[]) => handlers.get(callChannel('pickFile'))!(sender, ...args);
  return { engine, show, pick };
}

describe('pickFile in the desktop app (main: the open-file dialog)', () => {
  beforeEach(() => handlers.clear());

  it('opens one .jsonl/.json file for a prompt file and answers its path; the engine is never asked', async () => {
    const t = setup(['/home/me/data/sharegpt.json']);
    expect(await t.pick({ purpose: 'prompts' })).toEqual({ ok: true, result: { path: '/home/me/data/sharegpt.json' } });
    const [options] = t.show.mock.calls[0]!;
    expect(options.properties).toEqual(['openFile']);
    expect(options.filters?.[0]?.extensions).toEqual(['jsonl', 'json']);
    expect(options.title).toMatch(/prompt file/);
    expect(options.defaultPath).toBeUndefined();
    expect(t.engine.call).not.toHaveBeenCalled();
  });

  it('a trace gets its own title; the next dialog opens in the folder of the last file picked', async () => {
    const t = setup(['/traces/mooncake.jsonl', undefined]);
    await t.pick({ purpose: 'trace' });
    await t.pick({ purpose: 'prompts' });
    expect(t.show.mock.calls[0]![0].title).toMatch(/trace/);
    expect(t.show.mock.calls[1]![0].defaultPath).toBe('/traces');
  });

  it('cancelled: path null, nothing else', async () => {
    const t = setup([undefined]);
    expect(await t.pick({ purpose: 'trace' })).toEqual({ ok: true, result: { path: null } });
  });

  it('refuses other purposes, extra keys and foreign windows before any dialog opens', async () => {
    const t = setup(['/x.jsonl']);
    for (const args of [[{ purpose: 'ssh-key' }], [{ purpose: 'trace', defaultPath: '/etc' }], [], ['trace']]) {
      const outcome = (await t.pick(...args)) as { ok: boolean; error?: string };
      expect(outcome.ok).toBe(false);
      expect(outcome.error).not.toContain('\n');
    }
    const foreign = await handlers.get(callChannel('pickFile'))!({ sender: { id: 9 } }, { purpose: 'trace' });
    expect(foreign).toEqual({ ok: false, error: 'refused: not a servebench window' });
    expect(t.show).not.toHaveBeenCalled();
  });

  it('offers every file too, for data saved under another extension', () => {
    expect(openDialogOptions('prompts').filters?.at(-1)).toEqual({ name: 'All files', extensions: ['*'] });
  });
});
