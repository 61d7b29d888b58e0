import type { RunRecord } from '../../shared/run-record.js';
import { scrubSecrets } from '../servers/redact.js';
import { csvExporter } from './csv.js';
import type { ExportContext, ExportFile, Exporter, ReportFormat } from './exporter.js';
import { htmlExporter } from './html.js';
import { jsonExporter } from './json.js';
import { llmdReportExporter } from './llmd-report.js';
import type { RunFolder } from './load-run-folder.js';
import { markdownExporter } from './markdown.js';
import { pdfExporter } from './pdf.js';
import { vllmJsonExporter } from './vllm-json.js';

/** Every export format, one line each: the CLI, the app and the run itself use this list. */
export const EXPORTERS: readonly Exporter[] = [
  htmlExporter,
  pdfExporter,
  markdownExporter,
  csvExporter,
  jsonExporter,
  vllmJsonExporter,
  llmdReportExporter,
];

/** The format names, in registry order. */
export const REPORT_FORMATS: readonly ReportFormat[] = EXPORTERS.map((e) => e.format);

/** The exporter of a format, or undefined. */
export function findExporter(format: string): Exporter | undefined {
  return EXPORTERS.find((e) => e.format === format);
}

/** Renders one format; text passes a last scrub of the record's secrets and of key-shaped tokens. */
export async function renderExport(
  exporter: Exporter,
  folder: RunFolder,
  context: ExportContext = {},
): Promise<string | Uint8Array> {
  const out = await exporter.render(folder, context);
  return typeof out === 'string' ? scrubSecrets(out, folder.secrets) : out;
}

/** The files of a format that writes one per level, each passing the same scrub; null for other formats. */
export async function renderExportFiles(
  exporter: Exporter,
  folder: RunFolder,
  context: ExportContext = {},
): Promise<ExportFile[] | null> {
  if (!exporter.renderFiles) return null;
  const files = await exporter.renderFiles(folder, context);
  return files.map((f) => ({ name: f.name, text: scrubSecrets(f.text, folder.secrets) }));
}

/** summary.csv of a run as it ends: the registry's csv exporter, which needs the record alone. */
export async function renderSummaryCsv(record: RunRecord): Promise<string> {
  const folder: RunFolder = { dir: '', record, requests: [], gpu: [], engine: [], client: [], secrets: [], notes: [] };
  return (await renderExport(findExporter('csv') ?? csvExporter, folder)) as string;
}
