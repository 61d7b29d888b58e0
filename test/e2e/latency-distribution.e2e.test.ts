import { existsSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServebenchService } from '../../src/core/api.js';
import { defaultBenchmarkDeps } from '../../src/core/default-deps.js';
import type { UiServer } from '../../src/core/ui-server/index.js';
import { fmtDurationMs, fmtNumber } from '../../src/shared/format.js';
import { CHROMIUM } from './chromium.js';
import { openAppPage } from './app-page.js';
import { ensureBuilt } from './renderer-build.js';

const root = resolve(import.meta.dirname, '..', '..');
const fixture = join(root, 'test', 'fixtures', 'runs', 'closed');
const RUN = '20261201T103727Z-closed';
const shots = join(root, 'test-results');
const haveChromium = existsSync(CHROMIUM);

describe.skipIf(!haveChromium)('the latency distribution per level on the results page (headless Chromium)', () => {
  let out: string;
  let server: UiServer;
  let browser: Browser;
  let page: Page;
  const consoleErrors: string[] = [];
  const service = () => createServebenchService({ outDir: out, deps: defaultBenchmarkDeps() });
  let svc: ReturnType<typeof service>;

  beforeAll(async () => {
    ensureBuilt(root);
    out = await mkdtemp(join(tmpdir(), 'sb-e2e-dist-'));
    await cp(fixture, join(out, RUN), { recursive: true });
    svc = service();
    ({ server, browser, page } = await openAppPage(svc, consoleErrors, { viewport: { width: 1024, height: 640 } }));
  }, 300_000); // above the bounds of the two builds ensureBuilt may run

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (out) await rm(out, { recursive: true, force: true });
  });

  it("draws the core's bins as a histogram or a CDF, with the level's p50, p95 and p99", async () => {
    const record = await svc.getRun(RUN);
    const bins = await svc.getLatencyDistribution(RUN);
    await page.goto(server.url);
    await page.getByTestId('runs-list').getByText('closed', { exact: true }).click();
    const dist = page.getByTestId('latency-distribution');
    await dist.getByTestId('dist-plot').waitFor();
    const caption = async (): Promise<string> => (await dist.getByTestId('dist-caption').textContent()) ?? '';
    const ttft = record.levels[0]!.ttftMs;
    expect(await caption()).toContain(`${fmtNumber(bins.levels[0]!.bins.ttft!.n)} requests`);
    expect(await caption()).toContain(`p95 ${fmtDurationMs(ttft.p95)}`);
    await dist.getByText('CDF').click();
    await dist.locator('[data-mode="cdf"]').waitFor();
    await dist.getByText('E2E').click();
    await dist.locator('[data-metric="e2e"]').waitFor();
    expect(await caption()).toContain(`p99 ${fmtDurationMs(record.levels[0]!.e2eMs.p99)}`);
    if (record.levels.length > 1) {
      await dist.getByTestId('dist-level').selectOption('1');
      const e2e = record.levels[1]!.e2eMs;
      await dist
        .getByTestId('dist-caption')
        .getByText(`p50 ${fmtDurationMs(e2e.p50)}`)
        .waitFor();
    }
    await dist.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, 'latency-distribution.png') });
    expect(consoleErrors).toEqual([]);
  });

  it("keeps every level's checks inside the results card at 1024 px (a line under the level when the table is wide)", async () => {
    await page.goto(server.url);
    await page.getByTestId('runs-list').getByText('closed', { exact: true }).click();
    const table = page.getByTestId('results-table');
    await table.waitFor();
    const card = await table.evaluate((t) => t.closest('.card')!.getBoundingClientRect().right);
    const cells = table.locator('td.checks');
    expect(await cells.count()).toBe((await svc.getRun(RUN)).levels.length);
    for (const cell of await cells.all()) {
      const box = await cell.locator('> *').first().boundingBox();
      expect(box!.x + box!.width).toBeLessThanOrEqual(card);
    }
  });
});
