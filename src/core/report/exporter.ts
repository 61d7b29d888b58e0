import type { ExportFormat } from '../../shared/contract.js';
import type { RunFolder } from './load-run-folder.js';

/** The formats `servebench report --format` takes (the app's Export menu has the same). */
export type ReportFormat = ExportFormat;

/** What an exporter may need besides the run folder. */
export interface ExportContext {
  /** Prints an HTML page to PDF (headless Chromium); absent where no browser is available. */
  printPdf?: (html: string) => Promise<Uint8Array>;
  /** When the report was made (shown in the footer); defaults to now. */
  now?: () => Date;
}

/** One file of an export that writes a file per level. */
export interface ExportFile {
  name: string;
  text: string;
}

/** One export format: rendered from the run folder alone. */
export interface Exporter {
  format: ReportFormat;
  /** File name extension, with the dot. */
  extension: string;
  mediaType: string;
  /** Binary output cannot go to a terminal (`--out -`). */
  binary: boolean;
  /** One line for help texts. */
  description: string;
  render(folder: RunFolder, context: ExportContext): Promise<string | Uint8Array>;
  /** Formats whose readers take one level per file (llm-d's Benchmark Report): the files a folder gets. */
  renderFiles?(folder: RunFolder, context: ExportContext): Promise<ExportFile[]>;
}
