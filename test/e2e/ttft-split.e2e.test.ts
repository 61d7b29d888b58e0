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
if (!haveChromium) console.warn(`skipping the TTFT split e2e test: ${CHROMIUM} is absent (apt-get install chromium)`);

describe.skipIf(!haveChromium)("The app's results show where each level's TTFT goes (headless Chromium)", () => {
  let out: string;
  let server: UiServer;
  let browser: Browser;
  let page: Page;
  const consoleErrors: string[] = [];
  let levels = 0;

  beforeAll(async () => {
    ensureBuilt(root);
    out = await mkdtemp(join(tmpdir(), 'sb-e2e-split-'));
    await cp(fixture, join(out, RUN), { recursive: true });
    const file = join(out, RUN, 'run.json');
    const record = JSON.parse(await readFile(file, 'utf8')) as RunRecord;
    record.levels = record.levels.map((l) => ({
      ...l,
      ttftSplit: {
        basis: 'mean',
        ttftMs: 812,
        requests: 100,
        parts: [
          { part: 'queue', ms: 600, source: 'engine-metrics' },
          { part: 'prefill', ms: 150, source: 'engine-metrics' },
          { part: 'rest', ms: 62, source: 'rest' },
        ],
        unknown: [],
        restShare: 62 / 812,
      },
    }));
    levels = record.levels.length;
    await writeFile(file, JSON.stringify(record));
    const service = createServebenchService({ outDir: out, deps: defaultBenchmarkDeps() });
    ({ server, browser, page } = await openAppPage(service, consoleErrors, { viewport: { width: 1280, height: 900 } }));
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (out) await rm(out, { recursive: true, force: true });
  });

  it('one line and one stacked bar a level, each part with its source', async () => {
    await page.goto(server.url);
    await page.getByTestId('runs-list').getByText('closed', { exact: true }).click();
    const split = page.getByTestId('results-view').getByTestId('ttft-split');
    await split.waitFor();
    expect(await split.textContent()).toContain(
      'of TTFT mean 812 ms: queue 600 (engine /metrics), prefill 150 (engine /metrics), network and client 62.0',
    );
    expect(await split.locator('.seg.queue').count()).toBe(levels);
    // The colours' key names each part drawn, once.
    expect(await split.getByTestId('ttft-split-legend').locator('li').allTextContents()).toEqual([
      'queue',
      'prefill',
      'network and client',
    ]);
    if (process.env.SB_SCREENSHOT) await split.screenshot({ path: process.env.SB_SCREENSHOT });
    expect(consoleErrors).toEqual([]);
  });
});
