import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServebenchService } from '../../src/core/api.js';
import type { ServebenchService } from '../../src/core/api.js';
import { dispatchCall } from '../../src/core/ui-server/dispatch.js';
import { EXPORT_CHOICES } from '../../src/shared/contract.js';
import type { TextExportFormat } from '../../src/shared/contract.js';
import { FIXTURE_SECRETS, fixtureDir } from './report/fixtures.js';

const RUN = '20261130T094800Z-closed';
const secrets = {
  apiKey: 'plain-api-key-value-1234',
  env: 'supersecretenvvalue42',
  flag: 'server-side-key-value-987',
  password: 'urlpassword77',
};
const TEXT_FORMATS = EXPORT_CHOICES.map((c) => c.format).filter((f): f is TextExportFormat => f !== 'pdf');

let out: string;
let service: ServebenchService;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'sb-api-export-'));
  const dir = join(out, RUN);
  await cp(fixtureDir('closed'), dir, { recursive: true });
  // A run.json that still holds secrets (older or hand-edited): the contract must not hand them out.
  const record = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'));
  record.config.apiKey = secrets.apiKey;
  record.config.server.env = { HF_TOKEN: secrets.env };
  record.config.server.extraArgs = ['--api-key', secrets.flag];
  record.environment.engine.url = `http://user:${secrets.password}@10.0.0.5:8000`;
  record.environment.engine.command = `env HF_TOKEN=${secrets.env} vllm serve m --api-key ${secrets.flag}`;
  record.error = `server said: key ${secrets.apiKey} refused`;
  await writeFile(join(dir, 'run.json'), JSON.stringify(record));
  service = createServebenchService({ outDir: out, deps: {} as never });
});
afterEach(async () => {
  await rm(out, { recursive: true, force: true });
});

describe('exportRun (the contract)', () => {
  it('renders every text format of a finished run, named after the run, with no secret in any', async () => {
    expect(TEXT_FORMATS).toEqual(['html', 'md', 'csv', 'json', 'vllm-json']);
    for (const format of TEXT_FORMATS) {
      // Through the transports' door: arguments validated, the answer as a client gets it.
      const outcome = await dispatchCall(service, 'exportRun', [RUN, format]);
      expect(outcome.ok, format).toBe(true);
      const file = (outcome as { result: { format: string; fileName: string; mediaType: string; text: string } })
        .result;
      expect(file.format).toBe(format);
      expect(file.fileName).toMatch(new RegExp(`^${RUN}\\.(html|md|csv|json|vllm\\.jsonl)$`));
      expect(file.text.length).toBeGreaterThan(100);
      for (const secret of [...Object.values(secrets), ...FIXTURE_SECRETS])
        expect(file.text, format).not.toContain(secret);
    }
    const html = await service.exportRun(RUN, 'html');
    expect(html.mediaType).toBe('text/html');
    expect(html.text).toMatch(/^<!doctype html>/i);
    expect((await service.exportRun(RUN, 'csv')).text).toBe(
      await readFile(join(fixtureDir('closed'), 'summary.csv'), 'utf8'),
    );
  });

  it('refuses pdf and unknown formats, and ids that leave the runs folder, in one line', async () => {
    for (const args of [[RUN, 'pdf'], [RUN, 'docx'], ['../etc', 'html'], [RUN]]) {
      const outcome = await dispatchCall(service, 'exportRun', args);
      expect(outcome.ok, JSON.stringify(args)).toBe(false);
      expect((outcome as { error: string }).error).not.toContain('\n');
    }
  });

  it('a folder from a newer servebench or a missing run: one clear line', async () => {
    const newer = join(out, '20261201T000000Z-newer');
    await mkdir(newer);
    const record = JSON.parse(await readFile(join(out, RUN, 'run.json'), 'utf8'));
    await writeFile(join(newer, 'run.json'), JSON.stringify({ ...record, schemaVersion: 2 }));
    await expect(service.exportRun('20261201T000000Z-newer', 'md')).rejects.toThrow(
      /^run\.json in .* has schemaVersion 2, written by a newer servebench .*: update servebench to read it$/,
    );
    await expect(service.exportRun('nope', 'md')).rejects.toThrow(/^no run folder at .*nope/);
  });
});
