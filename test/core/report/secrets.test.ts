import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ExportContext } from '../../../src/core/report/exporter.js';
import { loadRunFolder } from '../../../src/core/report/load-run-folder.js';
import { EXPORTERS, renderExport } from '../../../src/core/report/registry.js';
import { FIXTURE_SECRETS, fixtureCopy, fixtureDir } from './fixtures.js';

/** Every format as text; the PDF's page is captured as the HTML handed to the printer. */
async function everyExport(dir: string): Promise<Record<string, string>> {
  const folder = await loadRunFolder(dir);
  const out: Record<string, string> = {};
  for (const exporter of EXPORTERS) {
    const context: ExportContext = {
      printPdf: async (html) => {
        out[`${exporter.format}-page`] = html;
        return new Uint8Array([37, 80, 68, 70]);
      },
    };
    const result = await renderExport(exporter, folder, context);
    out[exporter.format] = typeof result === 'string' ? result : Buffer.from(result).toString('latin1');
  }
  return out;
}

describe('secrets given to a run appear in no export', () => {
  it('the run made with --api-key and --env HF_TOKEN=... (by the real CLI)', async () => {
    for (const file of await readdir(fixtureDir('closed'))) {
      const text = await readFile(join(fixtureDir('closed'), file), 'utf8');
      for (const secret of FIXTURE_SECRETS) expect(text, file).not.toContain(secret);
    }
    const exports = await everyExport(fixtureDir('closed'));
    expect(Object.keys(exports)).toEqual(
      expect.arrayContaining(['html', 'pdf', 'pdf-page', 'md', 'csv', 'json', 'vllm-json']),
    );
    for (const [format, text] of Object.entries(exports)) {
      for (const secret of FIXTURE_SECRETS) expect(text, format).not.toContain(secret);
    }
  });

  it('a run.json that still holds secrets (older or hand-edited): key, env values, flags, URL password, command, errors', async () => {
    const dir = await fixtureCopy('closed');
    const record = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'));
    const secrets = {
      apiKey: 'plain-api-key-value-1234',
      env: 'supersecretenvvalue42',
      flag: 'server-side-key-value-987',
      password: 'urlpassword77',
      bearer: 'abcdefghijklmnop123456',
    };
    record.config.apiKey = secrets.apiKey;
    record.config.server.env = { HF_TOKEN: secrets.env, CUDA_VISIBLE_DEVICES: '0' };
    record.config.server.extraArgs = ['--api-key', secrets.flag];
    record.config.server.url = `http://user:${secrets.password}@10.0.0.5:8000`;
    record.environment.engine.url = `http://user:${secrets.password}@10.0.0.5:8000`;
    record.environment.engine.command = `env HF_TOKEN=${secrets.env} vllm serve m --api-key ${secrets.flag}`;
    record.error = `server said: Authorization: Bearer ${secrets.bearer} refused (key ${secrets.apiKey})`;
    record.checks[0].detail = `uses ${secrets.env}`;
    await writeFile(join(dir, 'run.json'), JSON.stringify(record));
    const lines = (await readFile(join(dir, 'requests.jsonl'), 'utf8')).split('\n').filter(Boolean);
    const bad = JSON.parse(lines[lines.length - 1]!);
    Object.assign(bad, { ok: false, error: `http-401: bad key ${secrets.flag}`, errorKind: 'http-401' });
    lines[lines.length - 1] = JSON.stringify(bad);
    await writeFile(join(dir, 'requests.jsonl'), lines.join('\n') + '\n');

    const exports = await everyExport(dir);
    for (const [format, text] of Object.entries(exports)) {
      for (const [what, secret] of Object.entries(secrets)) expect(text, `${format}: ${what}`).not.toContain(secret);
    }
    expect(exports.md).toContain('vllm serve m --api-key ***');
    expect(exports.json).toContain('"CUDA_VISIBLE_DEVICES": "0"');
    await rm(dirname(dir), { recursive: true, force: true });
  });
});
