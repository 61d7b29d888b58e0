import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrowserWindow, app } from 'electron';
import { paperForRegion, type PaperSize } from '../shared/paper-size.js';

/** The paper of the system's region (Letter in the US, A4 in most places), else of the app's locale. */
const systemPaper = (): PaperSize => paperForRegion(app.getLocaleCountryCode() || app.getLocale());

/**
 * The HTML report printed to PDF by Chromium's own print-to-PDF, in a hidden window that loads nothing else, on the
 * paper of the system's region.
 */
export async function printHtmlToPdf(html: string): Promise<Uint8Array> {
  // A file, not a data: URL: a report can pass Chromium's 2 MB limit on URLs.
  const dir = await mkdtemp(join(tmpdir(), 'servebench-pdf-'));
  const file = join(dir, 'report.html');
  const win = new BrowserWindow({
    show: false,
    webPreferences: { sandbox: true, contextIsolation: true, nodeIntegration: false, javascript: false },
  });
  try {
    await writeFile(file, html);
    win.webContents.on('will-navigate', (event) => event.preventDefault());
    await win.loadFile(file);
    return await win.webContents.printToPDF({ printBackground: true, pageSize: systemPaper() });
  } finally {
    win.destroy();
    await rm(dir, { recursive: true, force: true });
  }
}
