import type { ExportFormat, RunExport } from '../../shared/contract.js';
import type { ServebenchBridge } from '../../preload/bridge.js';
import type { Api } from './transport.js';

interface ElementLike {
  style: { display: string; cssText: string };
  remove(): void;
}
interface LinkLike extends ElementLike {
  href: string;
  download: string;
  click(): void;
}
interface FrameLike extends ElementLike {
  srcdoc: string;
  setAttribute(name: string, value: string): void;
  addEventListener(type: 'load', listener: () => void): void;
  contentWindow: {
    focus(): void;
    print(): void;
    addEventListener(type: 'afterprint', listener: () => void): void;
  } | null;
}

/** The parts of the page Export uses in browser mode (`window` has them; tests pass fakes). */
export interface ExportPage {
  document: {
    createElement(tag: 'a'): LinkLike;
    createElement(tag: 'iframe'): FrameLike;
    body: { append(node: LinkLike | FrameLike): void };
  };
  URL: { createObjectURL(blob: Blob): string; revokeObjectURL(url: string): void };
}

/** Where an export goes: Electron's save dialog (the preload bridge has it), else a download or the print dialog. */
export interface ExportHost {
  bridge?: Pick<ServebenchBridge, 'saveExport'>;
  page: ExportPage;
}

/** Hands a text file to the browser as a download (Blob + a link). */
export function download(page: ExportPage, file: Pick<RunExport, 'fileName' | 'mediaType' | 'text'>): void {
  const url = page.URL.createObjectURL(new Blob([file.text], { type: `${file.mediaType};charset=utf-8` }));
  const link = page.document.createElement('a');
  link.href = url;
  link.download = file.fileName;
  link.style.display = 'none';
  page.document.body.append(link);
  link.click();
  link.remove();
  // The download has its own reference by now; the URL only keeps the text in memory.
  setTimeout(() => page.URL.revokeObjectURL(url), 60_000);
}

/** Opens the browser's print dialog on the HTML report (its "Save as PDF" makes the PDF), in a hidden frame. */
function printHtml(page: ExportPage, html: string): void {
  const frame = page.document.createElement('iframe');
  frame.setAttribute('aria-hidden', 'true');
  frame.style.cssText = 'position:fixed;width:0;height:0;border:0;right:0;bottom:0';
  frame.addEventListener('load', () => {
    const win = frame.contentWindow;
    if (!win) return;
    win.addEventListener('afterprint', () => frame.remove());
    win.focus();
    win.print();
  });
  frame.srcdoc = html;
  page.document.body.append(frame);
}

/** Exports a finished run; resolves with one line for the user (empty when they cancelled the save dialog). */
export async function exportRun(
  api: Pick<Api, 'exportRun'>,
  host: ExportHost,
  runId: string,
  format: ExportFormat,
): Promise<string> {
  if (host.bridge?.saveExport) {
    const { saved } = await host.bridge.saveExport(runId, format);
    return saved ? `Saved ${saved}` : '';
  }
  if (format === 'pdf') {
    printHtml(host.page, (await api.exportRun(runId, 'html')).text);
    return 'Print dialog opened: choose "Save as PDF" as the printer.';
  }
  const file = await api.exportRun(runId, format);
  download(host.page, file);
  return `Downloaded ${file.fileName}`;
}
