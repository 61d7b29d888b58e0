import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrowserWindow } from 'electron';

/** The HTML report printed to PDF by Chromium's own print-to-PDF, in a hidden window that loads nothing else. */
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
    return await win.webContents.printToPDF({ printBackground: true, pageSize: 'A4' });
  } finally {
    win.destroy();
    await rm(dir, { recursive: true, force: true });
  }
}
