import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { UserError } from '../errors.js';
import { scrubSecrets } from '../servers/redact.js';
import type { Exporter } from './exporter.js';
import { htmlReport } from './html.js';

/** The one line a user sees when no browser can print the PDF. */
export const NO_CHROMIUM =
  'the PDF is printed by Chromium, which is not installed: apt-get install chromium (or put chromium or google-chrome on PATH), or export --format html and print that';

const NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Debian's /usr/bin/chromium, else a chromium or google-chrome on PATH; undefined when there is none. */
export function findChromium(
  env: NodeJS.ProcessEnv = process.env,
  preferred: readonly string[] = ['/usr/bin/chromium'],
): string | undefined {
  for (const file of preferred) if (executable(file)) return file;
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    for (const name of NAMES) if (executable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/** Prints an HTML page to PDF with headless Chromium (--print-to-pdf); its own profile, no network use needed. */
export async function printPdfWithChromium(html: string, chromium: string, timeoutMs = 120_000): Promise<Uint8Array> {
  const dir = await mkdtemp(join(tmpdir(), 'servebench-pdf-'));
  try {
    const page = join(dir, 'report.html');
    const pdf = join(dir, 'report.pdf');
    await writeFile(page, html);
    await new Promise<void>((resolvePrint, reject) => {
      execFile(
        chromium,
        [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
          `--user-data-dir=${join(dir, 'profile')}`,
          '--no-pdf-header-footer',
          `--print-to-pdf=${pdf}`,
          pathToFileURL(page).href,
        ],
        { timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024 },
        (error, _stdout, stderr) => {
          if (error)
            reject(
              new UserError(
                `Chromium could not print the PDF (${String(stderr).trim().split('\n').pop() ?? error.message})`,
                1,
              ),
            );
          else resolvePrint();
        },
      );
    });
    return new Uint8Array(
      await readFile(pdf).catch(() => {
        throw new UserError('Chromium printed no PDF; export --format html and print that', 1);
      }),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export const pdfExporter: Exporter = {
  format: 'pdf',
  extension: '.pdf',
  mediaType: 'application/pdf',
  binary: true,
  description: 'the HTML report printed to PDF by headless Chromium',
  render: async (folder, context) => {
    if (!context.printPdf) throw new UserError(NO_CHROMIUM);
    // Binary output skips the registry's text scrub: scrub the page before it is printed.
    return context.printPdf(scrubSecrets(htmlReport(folder, context.now?.() ?? new Date()), folder.secrets));
  },
};
