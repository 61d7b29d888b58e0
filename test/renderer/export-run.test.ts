import { describe, expect, it, vi } from 'vitest';
import { exportRun } from '../../src/renderer/lib/export-run.js';
import { fakePage } from './fake-page.js';
import type { RunExport } from '../../src/shared/contract.js';

const file = (format: RunExport['format']): RunExport => ({
  format,
  fileName: `r1.${format}`,
  mediaType: format === 'html' ? 'text/html' : 'text/markdown',
  text: `<h1>${format}</h1>`,
});

describe('Export in the app', () => {
  it('browser mode: a download of the export (Blob + a link with the file name)', async () => {
    const { page, made, blobs } = fakePage();
    const api = { exportRun: vi.fn(async (_id: string, f: RunExport['format']) => file(f)) };
    expect(await exportRun(api, { page }, 'r1', 'md')).toBe('Downloaded r1.md');
    expect(api.exportRun).toHaveBeenCalledWith('r1', 'md');
    const link = made.find((e) => e.tag === 'a')!;
    expect(link.download).toBe('r1.md');
    expect(link.href).toBe('blob:x');
    expect(link.click).toHaveBeenCalled();
    expect(await blobs[0]!.text()).toBe('<h1>md</h1>');
    expect(blobs[0]!.type).toMatch(/^text\/markdown/);
  });

  it('browser mode, pdf: the HTML report goes to the print dialog (a hidden frame), nothing is downloaded', async () => {
    const { page, made } = fakePage();
    const api = { exportRun: vi.fn(async (_id: string, f: RunExport['format']) => file(f)) };
    expect(await exportRun(api, { page }, 'r1', 'pdf')).toMatch(/Save as PDF/);
    expect(api.exportRun).toHaveBeenCalledWith('r1', 'html');
    const frame = made.find((e) => e.tag === 'iframe')!;
    expect(frame.srcdoc).toBe('<h1>html</h1>');
    expect(made.some((e) => e.tag === 'a')).toBe(false);
  });

  it('Electron: the save dialog in main does it all; a cancel says nothing', async () => {
    const { page, made } = fakePage();
    const api = { exportRun: vi.fn() };
    const bridge = { saveExport: vi.fn(async () => ({ saved: '/home/u/r1.pdf' })) };
    expect(await exportRun(api, { page, bridge }, 'r1', 'pdf')).toBe('Saved /home/u/r1.pdf');
    expect(bridge.saveExport).toHaveBeenCalledWith('r1', 'pdf');
    bridge.saveExport.mockResolvedValueOnce({ saved: null } as never);
    expect(await exportRun(api, { page, bridge }, 'r1', 'md')).toBe('');
    expect(api.exportRun).not.toHaveBeenCalled();
    expect(made).toEqual([]);
  });
});
