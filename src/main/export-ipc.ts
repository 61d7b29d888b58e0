import { extname } from 'node:path';
import { z } from 'zod';
import { ipcMain } from 'electron';
import type { IpcMainInvokeEvent } from 'electron';
import { COMPARE_MAX_RUNS, EXPORT_CHOICES } from '../shared/contract.js';
import type { ExportFormat, RunComparison, RunExport } from '../shared/contract.js';
import { zodErrorLine } from '../core/ui-server/dispatch.js';
import { nodeRunFs, replaceFile } from '../core/runs/run-fs.js';
import { SAVE_COMPARISON_CHANNEL, SAVE_EXPORT_CHANNEL } from '../preload/bridge.js';
import type { IpcOutcome } from '../preload/bridge.js';
import type { EngineClient } from './engine-client.js';

/** What saving an export needs from Electron; tests pass fakes. */
export interface ExportSaveOptions {
  engine: Pick<EngineClient, 'call'>;
  /** The save dialog (Electron's dialog.showSaveDialog on the asking window): the chosen path, or undefined. */
  choosePath: (event: IpcMainInvokeEvent, defaultName: string, format: ExportFormat) => Promise<string | undefined>;
  /** Chromium's print-to-PDF of an HTML page. */
  printPdf: (html: string) => Promise<Uint8Array>;
  trusted?: (event: IpcMainInvokeEvent) => boolean;
  write?: (path: string, data: string | Uint8Array) => Promise<void>;
}

const SaveArgs = z.tuple([z.string().min(1), z.enum(EXPORT_CHOICES.map((c) => c.format) as [ExportFormat])]);
const SaveComparisonArgs = z.tuple([z.array(z.string().min(1)).min(2).max(COMPARE_MAX_RUNS), z.enum(['html', 'md'])]);

/**
 * The Electron half of Export (and of saving a comparison): asks the engine for the run's export (pdf: its HTML, printed here), offers a save
 * dialog and writes the file. Answers `{ saved: path }`, or `{ saved: null }` when the dialog was cancelled.
 */
export function registerExportIpc(options: ExportSaveOptions): () => void {
  const { engine, choosePath, printPdf, trusted = () => true } = options;
  // Replaced whole: a full disk keeps the file that was there, never half a new one.
  const write = options.write ?? ((path, data) => replaceFile(nodeRunFs, path, data));
  ipcMain.handle(SAVE_EXPORT_CHANNEL, async (event: IpcMainInvokeEvent, ...args: unknown[]): Promise<IpcOutcome> => {
    if (!trusted(event)) return { ok: false, error: 'refused: not a servebench window' };
    const parsed = SaveArgs.safeParse(args);
    if (!parsed.success) return { ok: false, error: zodErrorLine(parsed.error) };
    const [runId, format] = parsed.data;
    const outcome = await engine.call('exportRun', [runId, format === 'pdf' ? 'html' : format]);
    if (!outcome.ok) return outcome;
    const exported = outcome.result as RunExport;
    const name =
      format === 'pdf' ? exported.fileName.slice(0, -extname(exported.fileName).length) + '.pdf' : exported.fileName;
    const path = await choosePath(event, name, format);
    if (!path) return { ok: true, result: { saved: null } };
    try {
      await write(path, format === 'pdf' ? await printPdf(exported.text) : exported.text);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      return { ok: false, error: `could not save ${path}: ${why}; choose another folder` };
    }
    return { ok: true, result: { saved: path } };
  });
  // Compare's save: the engine renders the comparison, the user picks where it goes.
  ipcMain.handle(
    SAVE_COMPARISON_CHANNEL,
    async (event: IpcMainInvokeEvent, ...args: unknown[]): Promise<IpcOutcome> => {
      if (!trusted(event)) return { ok: false, error: 'refused: not a servebench window' };
      const parsed = SaveComparisonArgs.safeParse(args);
      if (!parsed.success) return { ok: false, error: zodErrorLine(parsed.error) };
      const [runIds, format] = parsed.data;
      const outcome = await engine.call('compareRuns', [runIds, format]);
      if (!outcome.ok) return outcome;
      const comparison = outcome.result as RunComparison;
      const path = await choosePath(event, comparison.fileName, format);
      if (!path) return { ok: true, result: { saved: null } };
      try {
        await write(path, comparison.text);
      } catch (error) {
        const why = error instanceof Error ? error.message : String(error);
        return { ok: false, error: `could not save ${path}: ${why}; choose another folder` };
      }
      return { ok: true, result: { saved: path } };
    },
  );
  return () => {
    ipcMain.removeHandler(SAVE_EXPORT_CHANNEL);
    ipcMain.removeHandler(SAVE_COMPARISON_CHANNEL);
  };
}
