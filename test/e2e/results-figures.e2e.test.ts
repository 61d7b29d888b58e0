import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServebenchService } from '../../src/core/api.js';
import { defaultBenchmarkDeps } from '../../src/core/default-deps.js';
import type { UiServer } from '../../src/core/ui-server/index.js';
import type { RunRecord } from '../../src/shared/run-record.js';
import { CHROMIUM } from './chromium.js';
import { openAppPage } from './app-page.js';
import { ensureBuilt } from './renderer-build.js';

const root = resolve(import.meta.dirname, '..', '..');
const fixture = join(root, 'test', 'fixtures', 'runs', 'closed');
const RUN = '20261201T103727Z-closed';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium)
  console.warn(`skipping the results-figures e2e test: ${CHROMIUM} is absent (apt-get install chromium)`);

describe.skipIf(!haveChromium)("The app's results table shows the registry's figures (headless Chromium)", () => {
  let out: string;
  let server: UiServer;
  let browser: Browser;
  let page: Page;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    ensureBuilt(root);
    out = await mkdtemp(join(tmpdir(), 'sb-e2e-figures-'));
    await cp(fixture, join(out, RUN), { recursive: true });
    // Levels with enough TTFT samples for a p99.9 (the fixture's were recorded before it was summarised).
    const file = join(out, RUN, 'run.json');
    const record = JSON.parse(await readFile(file, 'utf8')) as RunRecord;
    record.levels = record.levels.map((l, i) => ({
      ...l,
      ttftMs: { ...l.ttftMs, n: 4000, p999: 20_500 + i, p999Ci: [20_000, 21_000] },
    }));
    await writeFile(file, JSON.stringify(record));
    const service = createServebenchService({ outDir: out, deps: defaultBenchmarkDeps() });
    ({ server, browser, page } = await openAppPage(service, consoleErrors, { viewport: { width: 1280, height: 800 } }));
  }, 300_000); // above the bounds of the two builds ensureBuilt may run

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (out) await rm(out, { recursive: true, force: true });
  });

  it('TTFT p99.9 sits under TTFT beside p50 and p95, its cells in seconds past ten thousand ms (never "s ms")', async () => {
    await page.goto(server.url);
    await page.getByTestId('runs-list').getByText('closed', { exact: true }).click();
    const table = page.getByTestId('results-view').getByTestId('results-table');
    await table.waitFor();
    const heads = (await table.locator('thead th').allTextContents()).map((t) => t.trim());
    expect(heads).toContain('TTFT');
    expect(heads.slice(heads.indexOf('p50'), heads.indexOf('p50') + 3)).toEqual(['p50', 'p95', 'p99.9']);
    const text = await table.textContent();
    expect(text).toContain('20.5 s');
    expect(text).not.toMatch(/ s ms/);
    expect(consoleErrors).toEqual([]);
  });
});
