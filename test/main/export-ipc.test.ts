import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('./fake-ipc-main.js'));
const { handlers } = await import('./fake-ipc-main.js');

const { registerExportIpc } = await import('../../src/main/export-ipc.js');
const { SAVE_COMPARISON_CHANNEL, SAVE_EXPORT_CHANNEL } = await import('../../src/preload/bridge.js');

const sender = { sender: { id: 1 } };
const RUN = '20261130T094800Z-demo';

function setup(options: { path?: string; engineError?: string; writeError?: Error } = {}) {
  const engine = {
    call: vi.fn(async (_method: string, args: unknown[]) =>
      options.engineError
        ? { ok: false as const, error: options.engineError }
        : {
            ok: true as const,
            result: {
              format: args[1],
              fileName: `${RUN}.${args[1] === 'html' ? 'html' : 'md'}`,
              mediaType: 'text/x',
              text: `<p>${String(args[1])}</p>`,
            },
          },
    ),
  };
  const choosePath = vi.fn(async (_event: unknown, name: string) =>
    'path' in options ? options.path : `/tmp/x/${name}`,
  );
  const printPdf = vi.fn(async (html: string) => new TextEncoder().encode(`%PDF of ${html}`));
  const write = vi.fn(async () => {
    if (options.writeError) throw options.writeError;
  });
  const off = registerExportIpc({ engine, choosePath, printPdf, write, trusted: (e) => e.sender.id === 1 });
  const save = (...args: unknown[]) => handlers.get(SAVE_EXPORT_CHANNEL)!(sender, ...args) as Promise<unknown>;
  return { engine, choosePath, printPdf, write, off, save };
}

describe('Export in Electron (main: save dialog, print-to-PDF)', () => {
  beforeEach(() => handlers.clear());

  it('a text format: the engine renders it, the save dialog offers its name, the file is written as is', async () => {
    const t = setup();
    expect(await t.save(RUN, 'md')).toEqual({ ok: true, result: { saved: `/tmp/x/${RUN}.md` } });
    expect(t.engine.call).toHaveBeenCalledWith('exportRun', [RUN, 'md']);
    expect(t.choosePath).toHaveBeenCalledWith(sender, `${RUN}.md`, 'md');
    expect(t.write).toHaveBeenCalledWith(`/tmp/x/${RUN}.md`, '<p>md</p>');
    expect(t.printPdf).not.toHaveBeenCalled();
  });

  it('pdf: the HTML report printed by Chromium, saved as .pdf', async () => {
    const t = setup();
    expect(await t.save(RUN, 'pdf')).toEqual({ ok: true, result: { saved: `/tmp/x/${RUN}.pdf` } });
    expect(t.engine.call).toHaveBeenCalledWith('exportRun', [RUN, 'html']);
    expect(t.printPdf).toHaveBeenCalledWith('<p>html</p>');
    const [[, data]] = t.write.mock.calls as unknown as [[string, Uint8Array]];
    expect(new TextDecoder().decode(data)).toBe('%PDF of <p>html</p>');
  });

  it('a cancelled dialog writes nothing', async () => {
    const t = setup({ path: undefined });
    expect(await t.save(RUN, 'csv')).toEqual({ ok: true, result: { saved: null } });
    expect(t.write).not.toHaveBeenCalled();
  });

  it('one line for every failure: bad arguments, a stranger, the engine, the disk', async () => {
    const t = setup();
    for (const args of [[RUN, 'docx'], [7, 'md'], [RUN]]) {
      const r = (await t.save(...args)) as { ok: boolean; error: string };
      expect(r.ok).toBe(false);
      expect(r.error).not.toContain('\n');
    }
    expect(t.engine.call).not.toHaveBeenCalled();
    expect(await handlers.get(SAVE_EXPORT_CHANNEL)!({ sender: { id: 2 } }, RUN, 'md')).toEqual({
      ok: false,
      error: 'refused: not a servebench window',
    });
    handlers.clear();
    const e = setup({ engineError: 'run nope not found' });
    expect(await e.save('nope', 'md')).toEqual({ ok: false, error: 'run nope not found' });
    expect(e.choosePath).not.toHaveBeenCalled();
    handlers.clear();
    const d = setup({ writeError: new Error('EACCES: permission denied') });
    expect(await d.save(RUN, 'md')).toEqual({
      ok: false,
      error: `could not save /tmp/x/${RUN}.md: EACCES: permission denied; choose another folder`,
    });
    d.off();
    expect(handlers.size).toBe(0);
  });

  it('a comparison: the engine compares the runs, the dialog offers its name, the file is written', async () => {
    const t = setup();
    const compare = (...args: unknown[]) =>
      handlers.get(SAVE_COMPARISON_CHANNEL)!(sender, ...args) as Promise<{ ok: boolean; error?: string }>;
    const ids = [RUN, `${RUN}-2`];
    expect(await compare(ids, 'html')).toEqual({ ok: true, result: { saved: `/tmp/x/${RUN}.html` } });
    expect(t.engine.call).toHaveBeenCalledWith('compareRuns', [ids, 'html']);
    expect(t.choosePath).toHaveBeenCalledWith(sender, `${RUN}.html`, 'html');
    expect(t.write).toHaveBeenCalledWith(`/tmp/x/${RUN}.html`, '<p>html</p>');
    for (const args of [
      [[RUN], 'html'],
      [ids, 'pdf'],
      [RUN, 'md'],
    ]) {
      const r = await compare(...args);
      expect(r.ok).toBe(false);
      expect(r.error).not.toContain('\n');
    }
    expect(t.engine.call).toHaveBeenCalledTimes(1);
  });
});
