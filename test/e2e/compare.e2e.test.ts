import { existsSync, mkdirSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServebenchService } from '../../src/core/api.js';
import { defaultBenchmarkDeps } from '../../src/core/default-deps.js';
import type { UiServer } from '../../src/core/ui-server/index.js';
import { FIXTURE_SECRETS } from '../core/report/fixtures.js';
import { CHROMIUM } from './chromium.js';
import { openAppPage } from './app-page.js';
import { ensureBuilt } from './renderer-build.js';

const root = resolve(import.meta.dirname, '..', '..');
const shots = join(root, 'test-results');
const fixtures = join(root, 'test', 'fixtures', 'runs');
const CLOSED = '20261201T103727Z-closed';
const OPEN = '20261201T105933Z-open';
const SWEEP = '20261201T103738Z-sweep';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.warn(`skipping the compare e2e test: ${CHROMIUM} is absent (apt-get install chromium)`);

describe.skipIf(!haveChromium)('Compare runs in `servebench ui` (headless Chromium)', () => {
  let out: string;
  let server: UiServer;
  let browser: Browser;
  let page: Page;
  const consoleErrors: string[] = [];
  const outside: string[] = [];

  beforeAll(async () => {
    ensureBuilt(root);
    mkdirSync(shots, { recursive: true });
    out = await mkdtemp(join(tmpdir(), 'sb-e2e-compare-'));
    // Finished runs made by the real CLI on the simulator (the closed one was given secrets).
    for (const [id, name] of [
      [CLOSED, 'closed'],
      [OPEN, 'open'],
      [SWEEP, 'sweep'],
    ]) {
      await cp(join(fixtures, name as string), join(out, id as string), { recursive: true });
    }
    const service = createServebenchService({ outDir: out, deps: defaultBenchmarkDeps() });
    ({ server, browser, page } = await openAppPage(service, consoleErrors, {
      viewport: { width: 1280, height: 860 },
      acceptDownloads: true,
    }));
    const origin = new URL(server.url).origin;
    page.on('request', (r) => {
      const url = r.url();
      if (!url.startsWith(origin) && !/^(about|blob|data):/.test(url)) outside.push(url);
    });
  }, 300_000); // above the bounds of the two builds ensureBuilt may run

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (out) await rm(out, { recursive: true, force: true });
  });

  it('offers a labelled checkbox per finished run and says to pick two or more', async () => {
    await page.goto(server.url);
    const list = page.getByTestId('runs-list');
    await list.getByText('closed', { exact: true }).waitFor();
    expect(await list.getByRole('checkbox').count()).toBe(3);
    await list.getByRole('checkbox', { name: /^Pick closed \(.+\) to compare$/ }).waitFor();
    expect(await page.getByTestId('compare-hint').textContent()).toBe('Compare: pick two or more runs in the list.');
    expect(await page.getByTestId('compare-button').isDisabled()).toBe(true);
    expect(consoleErrors).toEqual([]);
  });

  it('picks two runs by keyboard, then Compare shows the comparison against the first picked by default', async () => {
    const list = page.getByTestId('runs-list');
    await list.getByRole('checkbox', { name: /^Pick closed / }).focus();
    await page.keyboard.press('Space');
    await page.getByTestId('compare-hint').getByText('Compare: pick one more run.').waitFor();
    await list.getByRole('checkbox', { name: /^Pick sweep / }).focus();
    await page.keyboard.press('Space');
    await page.getByTestId('compare-hint').getByText('2 runs picked; choose the baseline.').waitFor();
    const button = page.getByTestId('compare-button');
    expect(await button.textContent()).toMatch(/Compare 2 runs/);
    await page.screenshot({ path: join(shots, 'compare-picked.png') });
    await button.focus();
    await page.keyboard.press('Enter');

    const view = page.getByTestId('compare-view');
    await view.getByRole('heading', { name: 'Comparison of 2 runs' }).waitFor();
    const frame = page.frameLocator('[data-testid="compare-frame"]');
    await frame.locator('body').getByText('closed').first().waitFor();
    const text = (await frame.locator('body').textContent()) ?? '';
    expect(text).toContain('sweep');
    // Both measured concurrency 1 at 32 in / 16 out: that load gets ratios and verdicts.
    expect(text).not.toContain('No load was measured by both');
    expect(text).toMatch(/faster|slower|no difference the data can show/);
    // Drawn: the overlaid charts are inline SVG with lines in them.
    expect(await frame.locator('svg path, svg polyline, svg line').count()).toBeGreaterThan(0);
    expect(await page.getByTestId('compare-frame').getAttribute('sandbox')).toBe('');
    await page.screenshot({ path: join(shots, 'compare-view.png'), fullPage: false });
    expect(consoleErrors).toEqual([]);
  });

  it('saves the comparison as HTML and as Markdown (downloads in browser mode), with no secret in them', async () => {
    const view = page.getByTestId('compare-view');
    const [html] = await Promise.all([page.waitForEvent('download'), view.getByTestId('compare-save-html').click()]);
    expect(html.suggestedFilename()).toBe(`compare-${CLOSED}-vs-${SWEEP}.html`);
    const htmlText = await readFile(await html.path(), 'utf8');
    expect(htmlText).toMatch(/^<!doctype html>/i);
    await view.getByTestId('compare-message').getByText(`Downloaded compare-${CLOSED}-vs-${SWEEP}.html`).waitFor();
    const [md] = await Promise.all([page.waitForEvent('download'), view.getByTestId('compare-save-md').click()]);
    expect(md.suggestedFilename()).toBe(`compare-${CLOSED}-vs-${SWEEP}.md`);
    const mdText = await readFile(await md.path(), 'utf8');
    expect(mdText).toMatch(/^# /);
    for (const secret of FIXTURE_SECRETS) {
      expect(htmlText).not.toContain(secret);
      expect(mdText).not.toContain(secret);
    }
    expect(consoleErrors).toEqual([]);
  });

  it('adds a third run, clears the picks, and fetched nothing from outside', async () => {
    const list = page.getByTestId('runs-list');
    await list.getByRole('checkbox', { name: /^Pick open / }).check();
    await page.getByTestId('compare-button').click();
    await page.getByTestId('compare-view').getByRole('heading', { name: 'Comparison of 3 runs' }).waitFor();
    await page.frameLocator('[data-testid="compare-frame"]').locator('body').getByText('open').first().waitFor();
    await page.getByTestId('compare-clear').click();
    await page.getByTestId('compare-hint').getByText('Compare: pick two or more runs in the list.').waitFor();
    expect(await list.getByRole('checkbox', { checked: true }).count()).toBe(0);
    expect(outside).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });

  it("shades a finished run's throttled spans on its GPU charts, as the live view does", async () => {
    // The closed fixture's GPU ran hot (thermal samples); the sweep's ran at full speed throughout.
    await page.getByTestId('runs-list').getByText('closed', { exact: true }).click();
    const timeline = page.getByTestId('results-view').getByTestId('timeline');
    await timeline.getByTestId('throttle-note').waitFor();
    await page.getByTestId('runs-list').getByText('sweep', { exact: true }).click();
    await page
      .getByTestId('results-view')
      .getByRole('heading', { name: /^sweep/ })
      .waitFor();
    await page.getByTestId('results-view').getByTestId('timeline').getByTestId('windows-note').waitFor();
    expect(await page.getByTestId('throttle-note').count()).toBe(0);
    expect(consoleErrors).toEqual([]);
  });
});
