import { existsSync, mkdirSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
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
// Finished simulator runs: closed failed checks (throttling, round spread) and warned (sample size);
// sweep only warned; open failed the client check.
const RUNS = [
  ['20261201T103727Z-closed', 'closed'],
  ['20261201T103738Z-sweep', 'sweep'],
  ['20261201T105933Z-open', 'open'],
] as const;
const BROKEN = '20261201T110000Z-broken';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.warn(`skipping the daily-use e2e test: ${CHROMIUM} is absent (apt-get install chromium)`);

/** Screenshots at the two sizes people use, light and dark. */
async function shoot(page: Page, name: string): Promise<void> {
  for (const [w, h] of [
    [1024, 640],
    [1440, 900],
  ] as const) {
    await page.setViewportSize({ width: w, height: h });
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.screenshot({ path: join(shots, `daily-${name}-${scheme}-${w}x${h}.png`) });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

describe.skipIf(!haveChromium)('the app as a daily tool: checks, runs table, baseline (headless Chromium)', () => {
  let out: string;
  let server: UiServer;
  let browser: Browser;
  let page: Page;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    ensureBuilt(root);
    mkdirSync(shots, { recursive: true });
    out = await mkdtemp(join(tmpdir(), 'sb-e2e-daily-'));
    for (const [id, name] of RUNS) await cp(join(fixtures, name), join(out, id), { recursive: true });
    // A launch that failed before measuring: the closed run's record with no level and the server's failure.
    const record = JSON.parse(await readFile(join(fixtures, 'closed', 'run.json'), 'utf8')) as Record<string, unknown>;
    await mkdir(join(out, BROKEN));
    await writeFile(
      join(out, BROKEN, 'run.json'),
      JSON.stringify({
        ...record,
        id: BROKEN,
        label: 'broken',
        status: 'failed',
        levels: [],
        error: 'the server exited during start-up; pass --model',
      }),
    );
    const service = createServebenchService({ outDir: out, deps: defaultBenchmarkDeps() });
    ({ server, browser, page } = await openAppPage(service, consoleErrors, { viewport: { width: 1440, height: 900 } }));
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (out) await rm(out, { recursive: true, force: true });
  });

  it("puts a level's failed checks under a fail pill and its warnings under a warn pill", async () => {
    await page.goto(server.url);
    await page.getByTestId('runs-list').getByText('closed', { exact: true }).click();
    const first = page.getByTestId('results-view').getByTestId('results-row').first();
    const pills = first.getByTestId('check-pills');
    await pills.waitFor();
    expect(await pills.locator('[data-status="fail"]').textContent()).toBe('failround-spread, throttling');
    expect(await pills.locator('[data-status="warn"]').textContent()).toBe('warnsample-size');
    // Amber and red are two colours, not one.
    const colour = (status: string) =>
      page.evaluate<string>(
        `getComputedStyle(document.querySelector('[data-testid="results-row"] [data-status="${status}"] .pill')).backgroundColor`,
      );
    expect(await colour('warn')).not.toBe(await colour('fail'));
    await shoot(page, 'results');
    // The thermal samples of the closed run: throttling shaded red, named as such (no power cap in this run).
    const timeline = page.getByTestId('results-view').getByTestId('timeline');
    await timeline.getByTestId('throttle-note').waitFor();
    expect(await timeline.getByTestId('power-cap-note').count()).toBe(0);
    await timeline.scrollIntoViewIfNeeded();
    await timeline.screenshot({ path: join(shots, 'daily-timeline.png') });
    expect(consoleErrors).toEqual([]);
  });

  it('gives a run that failed a check a red dot and one that only warned an amber one', async () => {
    const dot = (label: string) =>
      page
        .getByTestId('runs-list')
        .locator('li', { hasText: label })
        .getByTestId('run-dot')
        .getAttribute('data-verdict');
    expect(await dot('closed')).toBe('fail');
    expect(await dot('sweep')).toBe('warn');
  });

  it('lists every run in a table sorted by a header click, with its figures and verdict', async () => {
    await page.getByTestId('nav-runs').click();
    const table = page.getByTestId('runs-table');
    await table.waitFor();
    const labels = () => table.locator('tbody tr td.label button').allTextContents();
    // Newest first by default.
    expect(await labels()).toEqual(['open', 'sweep', 'closed']);
    await page.getByTestId('sort-peak').click();
    expect(await labels()).toEqual(['closed', 'sweep', 'open']);
    await page.getByTestId('sort-peak').click();
    expect(await labels()).toEqual(['open', 'sweep', 'closed']);
    expect(await page.getByTestId('sort-peak').locator('..').getAttribute('aria-sort')).toBe('ascending');
    const row = table.locator('tr', { hasText: 'closed' });
    expect(await row.getByTestId('run-verdict').getAttribute('data-verdict')).toBe('fail');
    // The closed run's peak is its second level's 333 tok/s; its first level's TTFT p95 13.1 ms.
    expect(await row.locator('td.num').allTextContents()).toEqual(['333', '13.1 ms']);
    await shoot(page, 'runs-table');
    expect(consoleErrors).toEqual([]);
  });

  it('compares against the baseline chosen, not the first ticked', async () => {
    const table = page.getByTestId('runs-table');
    await table.getByRole('checkbox', { name: /^Pick closed / }).check();
    await table.getByRole('checkbox', { name: /^Pick sweep / }).check();
    const bar = page.getByTestId('compare-baseline');
    await bar.getByRole('radio', { name: 'sweep' }).check();
    await page.getByTestId('compare-button').click();
    const frame = page.frameLocator('[data-testid="compare-frame"]');
    // A server sweep is a series per configuration: the baseline is the sweep's first.
    await frame.getByText(/^Baseline: sweep\b/).waitFor();
    // Above it, each run compared with its checks: the baseline first, a warning apart from a failure.
    const compared = page.getByTestId('compared-runs').locator('li');
    expect(await compared.first().textContent()).toMatch(/^sweep\s*baseline/);
    expect(await compared.first().locator('[data-status="fail"]').count()).toBe(0);
    expect(await compared.nth(1).locator('[data-status="fail"]').textContent()).toContain('throttling');
    await shoot(page, 'compare');
    expect(consoleErrors).toEqual([]);
  });

  it('shows what the report shows (command, environment, configuration, redacted) and runs it again', async () => {
    await page.getByTestId('runs-list').getByText('closed', { exact: true }).click();
    const details = page.getByTestId('results-view').getByTestId('run-details');
    await details.waitFor();
    expect(await details.getByTestId('server-command').textContent()).toMatch(
      /sim --mimic vllm .*--profile thermal-throttle-demo/,
    );
    expect(await details.getByTestId('environment').textContent()).toContain('NVIDIA H200');
    const config = (await details.getByTestId('run-config').textContent()) ?? '';
    expect(config).toContain('simProfile: thermal-throttle-demo');
    expect(config).toMatch(/HF_TOKEN: "?\*\*\*"?/);
    const text = (await page.getByTestId('results-view').textContent()) ?? '';
    for (const secret of FIXTURE_SECRETS) expect(text).not.toContain(secret);
    await details.locator('summary').click();
    await page.setViewportSize({ width: 1440, height: 900 });
    await details.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, 'daily-run-details.png') });

    await page.getByTestId('run-again').click();
    await page.getByTestId('new-run-form').waitFor();
    expect(await page.getByTestId('label').inputValue()).toBe('closed');
    expect(await page.getByTestId('engine-sim').isChecked()).toBe(true);
    expect(await page.getByTestId('run-again-note').textContent()).toContain('HF_TOKEN');
    // The recorded "off" of a switch whose default is off is the default's own option: listed once, chosen.
    const capacity = page.getByTestId('find-capacity');
    expect(await capacity.inputValue()).toBe('');
    expect(await capacity.locator('option').allTextContents()).toEqual(['off (default)', 'on']);
    await shoot(page, 'run-again');
    expect(consoleErrors).toEqual([]);
  });

  it('keeps a failed launch apart from the runs, in its words, and clears it', async () => {
    await page.getByTestId('nav-new').click();
    expect(await page.getByTestId('runs-list').getByText('broken').count()).toBe(0);
    const attempts = page.getByTestId('failed-attempts');
    await attempts.locator('summary').click();
    await attempts.getByText('broken').click();
    // The core's words name flags; the app names its form's fields.
    await page
      .getByTestId('results-view')
      .getByText('failed: the server exited during start-up; fill in Model')
      .waitFor();
    await page.getByTestId('nav-runs').click();
    expect(await page.getByTestId('runs-table').getByText('broken').count()).toBe(0);
    await page.getByTestId('clear-attempts').click();
    await attempts.waitFor({ state: 'detached' });
    expect(await readdir(out)).not.toContain(BROKEN);
    expect(consoleErrors).toEqual([]);
  });

  it('the form: no label cut at 1024 px, a profile select, nothing carried across engines, a refusal under its field', async () => {
    await page.setViewportSize({ width: 1024, height: 640 });
    await page.getByTestId('nav-new').click();
    await page.getByTestId('engine-sim').check({ force: true });
    for (const d of await page.locator('details.more').all())
      await d.evaluate((e) => ((e as unknown as { open: boolean }).open = true));
    const cut = await page.evaluate<string[]>(`[...document.querySelectorAll('.field > span:first-child')]
      .filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent)`);
    expect(cut).toEqual([]);
    const segments = await page.evaluate<string[]>(`[...document.querySelectorAll('.segmented label')]
      .filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent.trim())`);
    expect(segments).toEqual([]);
    await page.screenshot({ path: join(shots, 'daily-form-1024.png'), fullPage: true });

    // The simulator's profiles are a list to pick from, not a name to guess.
    const profile = page.getByTestId('sim-profile');
    expect(await profile.evaluate((e) => e.tagName)).toBe('SELECT');
    await profile.selectOption('power-capped');
    await page.getByTestId('model').fill('servebench/sim-llama-8b');
    await page.getByTestId('engine-vllm').check({ force: true });
    expect(await page.getByTestId('model').inputValue()).toBe('');
    await page.getByTestId('engine-sim').check({ force: true });
    expect(await page.getByTestId('sim-profile').inputValue()).toBe('');

    await page.getByTestId('max-model-len').fill('1000');
    await page.getByTestId('input-len').fill('900');
    await page.getByTestId('output-len').fill('200');
    await page.getByTestId('start').click();
    const under = page.locator('label', { has: page.getByTestId('output-len') }).getByTestId('field-error');
    expect(await under.textContent()).toMatch(
      /^Input tokens \+ Output tokens \(1100\) is over Max model length \(1000\)/,
    );
    await shoot(page, 'form-refused');
    expect(consoleErrors).toEqual([]);
  });
});
