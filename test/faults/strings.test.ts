import { spawnSync } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { marked } from 'marked';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { loadRunFolder } from '../../src/core/report/load-run-folder.js';
import { EXPORTERS, renderExport } from '../../src/core/report/registry.js';
import { renderComparison } from '../../src/core/report/compare/index.js';
import { stripControls } from '../../src/shared/control-chars.js';
import { fixtureCopy } from '../core/report/fixtures.js';
import { runCliAsync } from '../fakes/run-cli.js';

// Every string from outside (labels, model names, versions, check details, messages, server errors, GPU names)
// written into every export and every terminal line: none may become markup, a formula or a terminal command.

/** A string that is HTML, Markdown, a spreadsheet formula and terminal commands at once. */
const HOSTILE =
  '=HYPERLINK("http://e")|<script>alert(1)</script><img src=x onerror=alert(2)>[a](javascript:alert(3))' +
  '![i](x) `code` *em* _u_ ~~s~~ \u001b[2J\u001b]0;TITLE\u0007\r\u001b[1AFAKE: all checks passed\u202e\u0085';

/** Controls a terminal or a renderer acts on: none may survive into any output. */
// eslint-disable-next-line no-control-regex -- the controls are what this test looks for
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** Fields that must keep their form for the record to be read at all (enums, dates, clock): left as they are. */
const KEEP = new Set(['status', 'startedAt', 'finishedAt', 'originWall', 'originMonoNs', 'outputTokensSource', 'mode']);

/** Every string leaf of `value` (but KEEP's) replaced by HOSTILE; the count of those replaced. */
function poison(value: unknown, counter = { n: 0 }): { n: number } {
  if (!value || typeof value !== 'object') return counter;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v === 'string' && !KEEP.has(k)) {
      (value as Record<string, unknown>)[k] = HOSTILE;
      counter.n++;
    } else poison(v, counter);
  }
  return counter;
}

let hostileDir: string;
let hostileCopy: string;
const made: string[] = [];

/** A run folder whose every string field, request error, GPU name and message is HOSTILE. */
async function hostileFolder(): Promise<string> {
  const dir = await fixtureCopy('closed');
  made.push(dir);
  const record = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8')) as Record<string, unknown>;
  expect(poison(record).n).toBeGreaterThan(20);
  record.error = HOSTILE;
  record.messages = [{ atMs: 10, severity: HOSTILE, text: HOSTILE, count: 2 }];
  const levels = record.levels as Array<Record<string, unknown>>;
  levels[0]!.serverVariant = { [HOSTILE]: HOSTILE };
  levels[0]!.errorsByReason = { [HOSTILE]: 1 };
  levels[0]!.cutShort = HOSTILE;
  await writeFile(join(dir, 'run.json'), JSON.stringify(record, null, 2));
  const requests = (await readFile(join(dir, 'requests.jsonl'), 'utf8')).trim().split('\n');
  const bad = requests.map((line) => {
    const r = JSON.parse(line) as Record<string, unknown>;
    return JSON.stringify({ ...r, error: HOSTILE });
  });
  await writeFile(join(dir, 'requests.jsonl'), `${bad.join('\n')}\n`);
  const telemetry = (await readFile(join(dir, 'telemetry.jsonl'), 'utf8')).trim().split('\n');
  const gpus = telemetry.map((line) => {
    const s = JSON.parse(line) as Record<string, unknown>;
    return JSON.stringify(s.kind === 'gpu' ? { ...s, gpu: HOSTILE, name: HOSTILE } : s);
  });
  await writeFile(join(dir, 'telemetry.jsonl'), `${gpus.join('\n')}\n`);
  return dir;
}

beforeAll(async () => {
  hostileDir = await hostileFolder();
  hostileCopy = await hostileFolder();
});
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});
const cleanups: Array<() => Promise<void>> = [];

/** HTML with no element or attribute of the hostile string's making; `ownScripts` are servebench's own. */
function inertHtml(html: string, ownScripts: number): void {
  expect(html.match(/<script\b/g) ?? []).toHaveLength(ownScripts);
  expect(html).not.toMatch(/<img\b/i);
  expect(html).not.toMatch(/<a\b/i);
  expect(html).not.toMatch(/<[^>]*\bonerror\s*=/i);
  expect(html).not.toMatch(/href\s*=\s*["']?javascript:/i);
  expect(html).not.toMatch(CONTROL);
}

/** Every row of every table has as many cells as its header (a pipe in a label split no cell). */
function tablesWhole(html: string): void {
  for (const table of html.match(/<table>[\s\S]*?<\/table>/g) ?? []) {
    const rows = table.match(/<tr>[\s\S]*?<\/tr>/g) ?? [];
    const cells = rows.map((r) => (r.match(/<t[hd]\b/g) ?? []).length);
    expect(new Set(cells).size, table.slice(0, 200)).toBe(1);
  }
}

/** The cells of a CSV text (RFC 4180 quoting). */
function csvCells(text: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') [cell, i] = [cell + '"', i + 1];
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',' || c === '\n') [cells[cells.length], cell] = [cell, ''];
    else cell += c;
  }
  return cells;
}

describe('a run folder whose every string is hostile, through every exporter', () => {
  for (const exporter of EXPORTERS.filter((e) => !e.binary)) {
    it(`${exporter.format}: no foreign string becomes markup, a formula or a control`, async () => {
      const out = (await renderExport(exporter, await loadRunFolder(hostileDir))) as string;
      if (exporter.format === 'html') {
        inertHtml(out, 4); // its own: the record's JSON, the timeline's JSON, uPlot and the timeline's drawing
        expect(out).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      } else if (exporter.format === 'md') {
        expect(out).not.toMatch(CONTROL);
        const rendered = await marked.parse(out);
        inertHtml(rendered, 0);
        tablesWhole(rendered);
        expect(rendered).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      } else if (exporter.format === 'csv') {
        const cells = csvCells(out);
        expect(cells.length).toBeGreaterThan(10);
        for (const c of cells) {
          expect(c).not.toMatch(CONTROL);
          if (!/^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(c)) expect(c, c).not.toMatch(/^[=+\-@\t\r]/);
        }
        expect(out).toContain("'=HYPERLINK");
      } else if (exporter.mediaType === 'application/yaml') {
        // YAML exports are data, as JSON's are: every document parses, the hostile strings kept as strings.
        const docs = parseAllDocuments(out);
        expect(docs.length).toBeGreaterThan(0);
        for (const d of docs) expect(d.errors).toEqual([]);
        expect(JSON.stringify(docs.map((d) => d.toJS() as unknown))).toContain('=HYPERLINK');
      } else {
        // JSON exports are data: they parse, and carry the strings as they were (escaped by JSON itself).
        for (const line of exporter.format === 'vllm-json' ? out.trim().split('\n') : [out])
          expect(() => JSON.parse(line) as unknown).not.toThrow();
      }
    });
  }

  it('pdf: its HTML is the html exporter, inert (checked above); the registry has no other binary format', () => {
    expect(EXPORTERS.filter((e) => e.binary).map((e) => e.format)).toEqual(['pdf']);
  });

  for (const format of ['md', 'html'] as const) {
    it(`compare --format ${format}: labels, conditions and notes from hostile runs stay text`, async () => {
      const { text } = await renderComparison([hostileDir, hostileCopy], format, { replicates: 50 });
      if (format === 'html') inertHtml(text, 0);
      else {
        expect(text).not.toMatch(CONTROL);
        const rendered = await marked.parse(text);
        inertHtml(rendered, 0);
        tablesWhole(rendered);
      }
    });
  }
});

describe('terminal controls never reach the terminal', () => {
  it('stripControls removes ESC sequences whole, C0 but newline and tab, lone CR, DEL, C1 and bidi controls', () => {
    expect(stripControls('a\u001b[2Jb\u001b]0;title\u0007c\u001b]8;;http://x\u001b\\d\re\u202ef\u0085g\u007fh')).toBe(
      'abcdefgh',
    );
    expect(stripControls('line 1\r\nline 2\tcol')).toBe('line 1\nline 2\tcol');
    expect(stripControls('plain text, unchanged')).toBe('plain text, unchanged');
  });

  it("a server's model name and error text with ESC sequences: the CLI prints them without a single control", async () => {
    const { url, server } = await startHostileServer();
    cleanups.push(() => new Promise((r) => server.close(() => r())));
    const out = await mkdtemp(join(tmpdir(), 'sb-strings-'));
    cleanups.push(() => rm(out, { recursive: true, force: true }));
    const r = await runCliAsync([
      'run',
      '--url',
      url,
      '--concurrency',
      '1',
      '--rounds',
      '1',
      '--requests-per-round',
      '2',
      '--no-warmup',
      '--out',
      out,
      '--verbose',
    ]);
    const printed = r.stdout + r.stderr;
    // The server's words are there (quoted), its controls are not.
    expect(printed).toMatch(/FAKE: all checks passed/);
    expect(printed).not.toMatch(CONTROL);
  });

  it.runIf(process.platform !== 'win32')(
    "nvidia-smi's raw bytes and GPU names: printed without a control",
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'sb-smi-'));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      const smi = join(dir, 'nvidia-smi');
      await writeFile(
        smi,
        "#!/bin/sh\nprintf 'NVIDIA \\033[2J\\033]0;pwned\\007H200\\033[1A\\rFAKE, 0, 1980, 1980, 3201, 40, 40, 100.0, 700.0, 0, 0, 143771, P0, 0x0\\n'\n",
      );
      await chmod(smi, 0o755);
      const r = spawnSync(
        process.execPath,
        [new URL('../../bin/servebench.js', import.meta.url).pathname, 'gpu', '--nvidia-smi', smi],
        {
          encoding: 'utf8',
          timeout: 30_000,
        },
      );
      expect(r.status).not.toBeNull();
      expect(r.stdout + r.stderr).not.toMatch(CONTROL);
    },
  );
});

/** An OpenAI-compatible server whose every word carries terminal controls: model id, errors, version. */
async function startHostileServer(): Promise<{ url: string; server: Server }> {
  const evil = '\u001b[2J\u001b]0;TITLE\u0007\r\u001b[1AFAKE: all checks passed\u202e';
  const server = createServer((req, res) => {
    const json = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/health') return json(200, {});
    if (req.url?.startsWith('/version')) return json(200, { version: `1.0${evil}` });
    if (req.url?.startsWith('/v1/models')) return json(200, { object: 'list', data: [{ id: `model${evil}` }] });
    req.resume();
    req.on('end', () => json(400, { error: { message: `bad request${evil}` } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server };
}
