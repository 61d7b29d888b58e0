import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServebenchService } from '../../src/core/api.js';
import { defaultBenchmarkDeps } from '../../src/core/default-deps.js';
import { listPresets } from '../../src/core/servers/presets.js';
import type { UiServer } from '../../src/core/ui-server/index.js';
import { holdEvents } from './held-events.js';
import { CHROMIUM } from './chromium.js';
import { openAppPage } from './app-page.js';
import { ensureBuilt } from './renderer-build.js';

const root = resolve(import.meta.dirname, '..', '..');
const shots = join(root, 'test-results');
const haveChromium = existsSync(CHROMIUM);
// Waits end on what the page shows; these only bound them, generously, for a loaded or slow machine.
const SWEEP_TEST_MS = 300_000;
if (!haveChromium) console.warn(`skipping the app e2e test: ${CHROMIUM} is absent (apt-get install chromium)`);

describe.skipIf(!haveChromium)('servebench ui in headless Chromium (simulator)', () => {
  let out: string;
  let server: UiServer;
  let browser: Browser;
  let page: Page;
  let release: () => void = () => undefined;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    ensureBuilt(root);
    mkdirSync(shots, { recursive: true });
    out = await mkdtemp(join(tmpdir(), 'sb-e2e-'));
    // The page's events are held once the first measured request is back: the live view then stays mid-run
    // until the test has looked at it, instead of the test having to catch a moment the sweep may race past.
    const gate = holdEvents(
      createServebenchService({
        outDir: out,
        deps: defaultBenchmarkDeps(),
        listPresets: () => listPresets(),
      }),
      (event, seen) =>
        event.type === 'request-done' &&
        seen.some((e) => e.type === 'phase' && e.phase === 'measure' && e.levelIndex === event.levelIndex),
    );
    release = gate.release;
    ({ server, browser, page } = await openAppPage(gate.service, consoleErrors, {
      viewport: { width: 1280, height: 800 },
    }));
  }, 300_000); // above the bounds of the two builds ensureBuilt may run

  afterAll(async () => {
    release();
    await browser?.close();
    await server?.close();
    if (out) await rm(out, { recursive: true, force: true });
  });

  it('shows the new-run form with the presets', async () => {
    await page.goto(server.url);
    await page.getByTestId('new-run-form').waitFor();
    await page.getByTestId('preset').locator('option').nth(1).waitFor({ state: 'attached' });
    await page.screenshot({ path: join(shots, 'app-new-run.png') });
  });

  it('shows the one-line error inline for a bad sweep, the field named by its label', async () => {
    await page.getByTestId('concurrency').fill('0,2');
    await page.getByTestId('start').click();
    const error = page.getByTestId('form-error');
    await error.waitFor();
    expect(await error.textContent()).toMatch(/^Concurrency must be a comma-separated list of positive integers/);
  });

  it('runs a tiny sweep from the form, shows it live, then the results', { timeout: SWEEP_TEST_MS }, async () => {
    await page.getByTestId('engine-sim').check({ force: true });
    await page.getByTestId('concurrency').fill('1,2');
    await page.getByTestId('input-len').fill('32');
    await page.getByTestId('output-len').fill('16');
    await page.getByTestId('rounds').fill('1');
    // A tiny sweep: the credible defaults (300 requests a level) are for real runs, not for a UI test.
    await page.getByTestId('requests-per-round').fill('8');
    await page.getByTestId('warmup').fill('2');
    await page.getByTestId('label').fill('e2e-tiny');
    await page.getByTestId('gpu-price-per-hour').fill('2');
    await page.getByTestId('utilization').fill('60');
    await page.getByTestId('start').click();

    // Mid-run (events held after the first measured request): the live view shows the round being measured.
    const live = page.getByTestId('live-view');
    await live
      .getByText(/measuring round 1/)
      .first()
      .waitFor();
    expect(await live.locator('h1').textContent()).toBe('Running');
    await page.screenshot({ path: join(shots, 'app-live.png') });
    release();

    const results = page.getByTestId('results-view');
    await results.getByTestId('results-table').waitFor();
    const rows = results.getByTestId('results-row');
    expect(await rows.count()).toBe(2);
    expect((await rows.nth(0).locator('td').first().textContent())?.trim()).toBe('1');
    expect((await rows.nth(1).locator('td').first().textContent())?.trim()).toBe('2');
    // The shared columns: the load really offered beside the asked one, $/1M out at peak, then at the utilization given.
    expect((await rows.nth(0).locator('td').nth(1).textContent())?.trim()).toMatch(/^\d+(\.\d+)? \(p5 \d+(\.\d+)?\)$/);
    expect((await rows.nth(0).locator('td').nth(9).textContent())?.trim()).toMatch(/^\$\d+\.\d+$/);
    expect((await rows.nth(0).locator('td').nth(10).textContent())?.trim()).toMatch(/^\$\d+\.\d+$/);
    await results.getByTestId('simulated-badge').waitFor();
    // The run's telemetry over time (getTelemetry), on the latency's time axis, each level's window shaded.
    const timeline = results.getByTestId('timeline');
    for (const caption of ['GPU SM clock (MHz)', 'GPU temperature (°C)', 'GPU power (W)']) {
      await timeline.getByText(caption, { exact: true }).waitFor();
    }
    await timeline.getByTestId('windows-note').waitFor();
    await results.getByTestId('telemetry-simulated').waitFor();
    await page.screenshot({ path: join(shots, 'app-results.png') });
    await timeline.screenshot({ path: join(shots, 'app-results-telemetry.png') });
    await page.screenshot({ path: join(shots, 'app-results-full.png'), fullPage: true });
    // The run is listed and opens from the list.
    await page.getByTestId('runs-list').getByText('e2e-tiny').waitFor();
    expect(consoleErrors).toEqual([]);
  });

  it('opens a past run from the list after a reload', async () => {
    await page.reload();
    await page.getByTestId('new-run-form').waitFor();
    await page.getByTestId('runs-list').getByText('e2e-tiny').click();
    const results = page.getByTestId('results-view');
    await results.getByTestId('results-table').waitFor();
    expect(await results.getByTestId('results-row').count()).toBe(2);
    expect(await results.getByTestId('checks').locator('li').count()).toBeGreaterThan(5);
    await results.getByTestId('timeline').getByText('GPU SM clock (MHz)', { exact: true }).waitFor();
    await page.screenshot({ path: join(shots, 'app-past-run.png'), fullPage: true });
    expect(consoleErrors).toEqual([]);
  });

  it('says so when a past run has no telemetry', async () => {
    const [runDir] = (await readdir(out)).filter((d) => d.endsWith('-e2e-tiny'));
    await rm(join(out, runDir as string, 'telemetry.jsonl'));
    await page.reload();
    await page.getByTestId('runs-list').getByText('e2e-tiny').click();
    const timeline = page.getByTestId('results-view').getByTestId('timeline');
    await timeline.getByText(/No GPU telemetry was recorded for this run/).waitFor();
    expect(await timeline.getByText('GPU SM clock (MHz)', { exact: true }).count()).toBe(0);
    await timeline.screenshot({ path: join(shots, 'app-results-no-telemetry.png') });
    expect(consoleErrors).toEqual([]);
  });
});
