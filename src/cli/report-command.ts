import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { UserError } from '../core/errors.js';
import { DiskError, nodeRunFs, replaceFile } from '../core/runs/run-fs.js';
import { argsErrorLine, helpAsked } from './args-error.js';
import type { ExportContext } from '../core/report/exporter.js';
import { loadRunFolder } from '../core/report/load-run-folder.js';
import { findChromium, printPdfWithChromium } from '../core/report/pdf.js';
import { EXPORTERS, REPORT_FORMATS, findExporter, renderExport, renderExportFiles } from '../core/report/registry.js';
import type { ExportFile } from '../core/report/exporter.js';
import { wrapHelp } from './help-text.js';
import { writeData } from './terminal-output.js';

/** A format's line of the help: its description beside it, or under it where the name is longer than the column. */
const formatLine = (format: string, description: string): string =>
  format.length <= 10
    ? `                     ${format.padEnd(10)} ${description}`
    : `                     ${format}\n${' '.repeat(32)}${description}`;

const HELP = `Usage: servebench report RUN_DIR [--format FORMAT] [--out FILE]

Renders a report from a run folder alone (run.json, requests.jsonl, telemetry.jsonl). Secrets given to
the run (API key, HF token, --env values) appear in no report.

Options:
  --format FORMAT  ${REPORT_FORMATS.join(' | ')} (default html)
${EXPORTERS.map((e) => formatLine(e.format, e.description)).join('\n')}
  --out FILE       where to write it (default RUN_DIR/report<ext>); '-' writes text formats to stdout; for a format written a file per level (llmd-benchmark-report), the folder they go to (default RUN_DIR)
  -h, --help       this help`;

/** `servebench report RUN_DIR`: one export of a run folder; exit 2 with one line for a bad folder or format. */
export async function reportCommand(argv: string[]): Promise<number> {
  let values: { format?: string; out?: string; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        format: { type: 'string', short: 'f' },
        out: { type: 'string', short: 'o' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    if (helpAsked(argv)) {
      console.log(wrapHelp(HELP));
      return 0;
    }
    throw new UserError(argsErrorLine(error as Error, 'report'));
  }
  if (values.help) {
    console.log(wrapHelp(HELP));
    return 0;
  }
  if (positionals.length !== 1) {
    throw new UserError(`give one run folder, e.g. servebench report runs/20261130T094800Z-demo (see --help)`);
  }
  const format = values.format ?? 'html';
  const exporter = findExporter(format);
  if (!exporter) throw new UserError(`--format must be one of ${REPORT_FORMATS.join(', ')} (got '${format}')`);
  if (values.out === '-' && exporter.binary) {
    throw new UserError(
      `--out - writes text formats only; give a file name for ${format}, e.g. --out report${exporter.extension}`,
    );
  }
  const folder = await loadRunFolder(positionals[0] as string);
  const context: ExportContext = {};
  if (exporter.format === 'pdf') {
    const chromium = findChromium();
    if (chromium) context.printPdf = (html) => printPdfWithChromium(html, chromium);
  }
  const files = values.out === '-' ? null : await renderExportFiles(exporter, folder, context);
  if (files) return writeExportFiles(files, resolve(values.out ?? folder.dir), format, folder.notes);
  const output = await renderExport(exporter, folder, context);
  if (values.out === '-') {
    writeData(output as string);
    return 0;
  }
  const file = resolve(values.out ?? join(folder.dir, `report${exporter.extension}`));
  try {
    // Replaced whole: a full disk leaves the report that was there, never half a new one.
    await replaceFile(nodeRunFs, file, output);
  } catch (error) {
    throw new DiskError(file, error);
  }
  for (const note of folder.notes) console.error(`note: ${note}`);
  console.log(`${format} report written to ${file}`);
  return 0;
}

/** A format written a file per level: every file into one folder (made when missing), one line each refused. */
async function writeExportFiles(files: ExportFile[], dir: string, format: string, notes: string[]): Promise<number> {
  const fail = (error: unknown, what: string): never => {
    throw new DiskError(what, error);
  };
  await mkdir(dir, { recursive: true }).catch((error: unknown) => fail(error, dir));
  // Each replaced whole: a full disk leaves the report that was there, never half a new one.
  for (const f of files)
    await replaceFile(nodeRunFs, join(dir, f.name), f.text).catch((error: unknown) => fail(error, join(dir, f.name)));
  for (const note of notes) console.error(`note: ${note}`);
  console.log(`${format}: ${files.length} file(s) written to ${dir}`);
  return 0;
}
