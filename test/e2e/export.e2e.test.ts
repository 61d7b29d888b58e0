import { existsSync, mkdirSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServebenchService } from '../../src/core/api.js';
import { defaultBenchmarkDeps } from '../../src/core/default-deps.js';
import type { UiServer } from '../../src/core/ui-server/index.js';
import { FIXTURE_SECRETS } from '../core/report/fixtures.js';
import { CHROMIUM } from './chromium.js';
import { E2E_WAIT_MS as WAIT_MS, openAppPage } from './app-page.js';
import { ensureBuilt } from './renderer-build.js';

const root = resolve(import.meta.dirname, '..', '..');
const shots = join(root, 'test-results');
const fixture = join(root, 'test', 'fixtures', 'runs', 'closed');
const RUN = '20261201T103727Z-closed';
const NEWER = '20200102T030405Z-from-the-future';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.warn(`skipping the export e2e test: ${CHROMIUM} is absent (apt-get install chromium)`);

describe.skipIf(!haveChromium)('Export of a finished run in `servebench ui` (headless Chromium)', () => {
  let out: string;
  let server: UiServer;
  let browser: Browser;
  let page: Page;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    ensureBuilt(root);
    mkdirSync(shots, { recursive: true });
    out = await mkdtemp(join(tmpdir(), 'sb-e2e-export-'));
    // A finished run made by the real CLI (with --api-key and a secret env value), and a folder from a newer servebench.
    await cp(fixture, join(out, RUN), { recursive: true });
    const record = JSON.parse(await readFile(join(fixture, 'run.json'), 'utf8')) as Record<string, unknown>;
    await mkdir(join(out, NEWER));
    await writeFile(join(out, NEWER, 'run.json'), JSON.stringify({ ...record, schemaVersion: 2 }));
    const service = createServebenchService({ outDir: out, deps: defaultBenchmarkDeps() });
    ({ server, browser, page } = await openAppPage(service, consoleErrors, {
      viewport: { width: 1280, height: 800 },
      acceptDownloads: true,
    }));
  }, 300_000); // above the bounds of the two builds ensureBuilt may run

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (out) await rm(out, { recursive: true, force: true });
  });

  it('lists a folder from a newer servebench as unreadable, with the reason, beside the readable run', async () => {
    await page.goto(server.url);
    const list = page.getByTestId('runs-list');
    await list.getByText('closed', { exact: true }).waitFor();
    const bad = list.getByTestId('run-unreadable');
    await bad.waitFor();
    expect(await bad.textContent()).toMatch(
      /unreadable: run\.json has schemaVersion 2, written by a newer servebench \(.+\): update servebench to read it\s*$/,
    );
    expect(consoleErrors).toEqual([]);
  });

  it('Export → HTML downloads the report of the run, with no secret in it', async () => {
    await page.getByTestId('runs-list').getByText('closed', { exact: true }).click();
    const results = page.getByTestId('results-view');
    await results.getByTestId('results-table').waitFor();
    const button = results.getByTestId('export-button');
    expect(await button.getAttribute('aria-label')).toBe('Export this run');
    expect(await button.getAttribute('aria-expanded')).toBe('false');
    await page.screenshot({ path: join(shots, 'export-results.png') });

    await button.click();
    const menu = results.getByRole('menu', { name: 'Export format' });
    await menu.waitFor();
    expect(await menu.getByRole('menuitem').allTextContents()).toEqual([
      'HTML report',
      'PDF',
      'Markdown',
      'CSV (one row per level)',
      'JSON (the run record)',
      'vllm-json (vllm bench serve --save-result)',
    ]);
    await page.screenshot({ path: join(shots, 'export-menu.png') });

    const [download] = await Promise.all([page.waitForEvent('download'), menu.getByText('HTML report').click()]);
    expect(download.suggestedFilename()).toBe(`${RUN}.html`);
    const html = await readFile(await download.path(), 'utf8');
    expect(html).toMatch(/^<!doctype html>/i);
    expect(html).toContain(RUN);
    expect(html).toContain('SIMULATED');
    for (const secret of FIXTURE_SECRETS) expect(html).not.toContain(secret);
    await results.getByTestId('export-message').getByText(`Downloaded ${RUN}.html`).waitFor();
    // The downloaded file is the report itself: open it as a reader would.
    const report = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    // (The download's own path has no .html extension, so the page is given its text.)
    await report.setContent(html, { waitUntil: 'load' });
    expect(await report.locator('#table-results tbody tr').count()).toBe(2);
    await report.screenshot({ path: join(shots, 'export-downloaded-report.png') });
    await report.close();
    expect(consoleErrors).toEqual([]);
  });

  it('is reachable by keyboard: Enter opens the menu on its first format, arrows move, Escape closes', async () => {
    const results = page.getByTestId('results-view');
    const button = results.getByTestId('export-button');
    await button.focus();
    await page.keyboard.press('Enter');
    const menu = results.getByRole('menu', { name: 'Export format' });
    await menu.waitFor();
    await expect
      .poll(() => page.evaluate<string>("document.activeElement?.textContent?.trim() ?? ''"), { timeout: WAIT_MS })
      .toBe('HTML report');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    expect(await page.evaluate<string>("document.activeElement?.textContent?.trim() ?? ''")).toBe('Markdown');
    const [download] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
    expect(download.suggestedFilename()).toBe(`${RUN}.md`);
    expect(await readFile(await download.path(), 'utf8')).toMatch(/^# servebench report: closed/);
    await button.focus();
    await page.keyboard.press('Enter');
    await menu.waitFor();
    await page.keyboard.press('Escape');
    await menu.waitFor({ state: 'detached' });
    expect(await page.evaluate<string | null>("document.activeElement?.getAttribute('data-testid') ?? null")).toBe(
      'export-button',
    );
    expect(consoleErrors).toEqual([]);
  });
});
