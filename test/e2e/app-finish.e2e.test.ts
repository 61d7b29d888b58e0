import { existsSync, mkdirSync } from 'node:fs';
import { MIN_PACE_REQUESTS } from '../../src/shared/run-estimate.js';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServebenchService } from '../../src/core/api.js';
import { defaultBenchmarkDeps } from '../../src/core/default-deps.js';
import { listPresets } from '../../src/core/servers/presets.js';
import { SETTINGS_FILE, createSettingsStore } from '../../src/core/settings/settings-store.js';
import type { UiServer } from '../../src/core/ui-server/index.js';
import { tabThrough, unnamed } from './a11y-checks.js';
import { holdEvents } from './held-events.js';
import { CHROMIUM, collectErrors } from './chromium.js';
import { E2E_WAIT_MS as WAIT_MS, openAppPage } from './app-page.js';
import { ensureBuilt } from './renderer-build.js';

const root = resolve(import.meta.dirname, '..', '..');
const shots = join(root, 'test-results');
const haveChromium = existsSync(CHROMIUM);
// A run's test waits on what the page shows; this only bounds it, generously, for a loaded or slow machine.
const RUN_TEST_MS = 300_000;
const LABEL = 'finish-e2e';
if (!haveChromium) console.warn(`skipping the app-finish e2e test: ${CHROMIUM} is absent (apt-get install chromium)`);

/** Reads a file, '' while it is not there. */
const readOr = (path: string): Promise<string> => readFile(path, 'utf8').catch(() => '');

describe.skipIf(!haveChromium)('the finished app in headless Chromium (settings, runs list, live view, themes)', () => {
  let out: string;
  let settingsDir: string;
  let server: UiServer;
  let browser: Browser;
  let page: Page;
  let held: Promise<void> = Promise.resolve();
  let release: () => void = () => undefined;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    ensureBuilt(root);
    mkdirSync(shots, { recursive: true });
    out = await mkdtemp(join(tmpdir(), 'sb-e2e-finish-'));
    settingsDir = await mkdtemp(join(tmpdir(), 'sb-e2e-settings-'));
    // Held once the first level has enough requests back for a measured pace, so the time left shows,
    // and the run stays mid-level while the test reloads and looks, however fast the machine is.
    const gate = holdEvents(
      createServebenchService({
        outDir: out,
        deps: defaultBenchmarkDeps(),
        listPresets: () => listPresets(),
        settings: createSettingsStore({ dir: settingsDir, runsDir: out }),
      }),
      (event) => event.type === 'request-done' && event.levelIndex === 0 && event.done >= 4 * MIN_PACE_REQUESTS,
    );
    held = gate.held;
    release = gate.release;
    ({ server, browser, page } = await openAppPage(gate.service, consoleErrors, {
      viewport: { width: 1280, height: 720 },
    }));
  }, 300_000);

  afterAll(async () => {
    release();
    await browser?.close();
    await server?.close();
    if (out) await rm(out, { recursive: true, force: true });
    if (settingsDir) await rm(settingsDir, { recursive: true, force: true });
  });

  it('keeps the form across a reload; a secret env value is never written to disk', async () => {
    await page.goto(server.url);
    await page.getByTestId('new-run-form').waitFor();
    await page.locator('[data-settings="saved"]').waitFor();
    await page.getByTestId('engine-sim').check({ force: true });
    await page.getByTestId('concurrency').fill('1,2');
    await page.getByTestId('input-len').fill('32');
    await page.getByTestId('output-len').fill('16');
    await page.getByTestId('rounds').fill('1');
    // Tiny: the credible defaults (hundreds of requests a level) are for real runs, not for a UI test.
    await page.getByTestId('requests-per-round').fill('40');
    await page.getByTestId('warmup').fill('2');
    await page.getByTestId('gpu-price-per-hour').fill('3.5');
    await page.getByTestId('add-env').click();
    await page.getByTestId('env-name').fill('HF_TOKEN');
    await page.getByTestId('env-value').fill('hf_e2eSECRETvalue');
    await page.getByTestId('label').fill(LABEL);
    const file = join(settingsDir, SETTINGS_FILE);
    await expect.poll(() => readOr(file), { timeout: WAIT_MS }).toContain(LABEL);
    expect(await readOr(file)).not.toContain('hf_e2eSECRET');
    expect(await readOr(file)).toContain('3.5');

    // The runs folder: a relative path gets the one line naming the fix, next to the field.
    await page.getByTestId('runs-folder-change').click();
    await page.getByTestId('runs-folder-input').fill('runs');
    await page.getByTestId('runs-folder-save').click();
    expect(await page.getByTestId('runs-folder-error').textContent()).toMatch(/must be a full path/);
    const nextDir = join(settingsDir, 'next-runs');
    await page.getByTestId('runs-folder-input').fill(nextDir);
    await page.getByTestId('runs-folder-save').click();
    await page.getByTestId('runs-folder').getByText(`next start: ${nextDir}`).waitFor();
    expect(JSON.parse(await readOr(file)).runsDir).toBe(nextDir);

    await page.reload();
    await page.getByTestId('new-run-form').waitFor();
    await expect.poll(() => page.getByTestId('label').inputValue(), { timeout: WAIT_MS }).toBe(LABEL);
    expect(await page.getByTestId('runs-folder').textContent()).toContain(out);
    expect(await page.getByTestId('gpu-price-per-hour').inputValue()).toBe('3.5');
    expect(await page.getByTestId('requests-per-round').inputValue()).toBe('40');
    // In browser mode the secret lives in the server's memory only: back after a reload, not on disk.
    expect(await page.getByTestId('env-value').inputValue()).toBe('hf_e2eSECRETvalue');
    await page.screenshot({ path: join(shots, 'finish-form-restored.png') });
    expect(consoleErrors).toEqual([]);
  });

  it(
    'shows the time left mid-run, and the run survives a reload and a second window',
    { timeout: RUN_TEST_MS },
    async () => {
      await page.getByTestId('start').click();
      await held;
      const live = page.getByTestId('live-view');
      const levelLeft = live.getByTestId('level-left');
      await live.getByTestId('time-left').waitFor();
      await expect.poll(() => levelLeft.textContent(), { timeout: WAIT_MS }).toMatch(/^about \d+/);
      // The whole run's time left waits for a settled pace (test/shared/run-estimate.test.ts pins it).
      expect(await live.getByTestId('run-left').textContent()).toMatch(/^(about \d+|estimating…)/);
      await live.getByTestId('forming').waitFor();
      await page.screenshot({ path: join(shots, 'finish-live.png') });

      await page.reload();
      await page.getByTestId('live-view').waitFor();
      expect(await page.getByTestId('live-view').locator('h1').textContent()).toBe('Running');
      await expect.poll(() => page.getByTestId('level-left').textContent(), { timeout: WAIT_MS }).toMatch(/^about \d+/);
      // The run in progress is in the list too, and cannot be deleted while it runs.
      await page.getByTestId('runs-list').getByText(LABEL).waitFor();
      // Its row says it is running, not '0 levels'.
      await page
        .getByTestId('runs-list')
        .locator('li', { hasText: LABEL })
        .getByText(/· running$/)
        .waitFor();
      await page.screenshot({ path: join(shots, 'finish-live-after-reload.png') });
      // Every control of the live view has a name, and Tab reaches each with a focus ring.
      expect(await unnamed(page)).toEqual([]);
      expect(await tabThrough(page)).toEqual({ missed: [], noRing: [] });

      const second = await browser.newPage({ viewport: { width: 1280, height: 720 } });
      collectErrors(second, consoleErrors);
      await second.goto(server.url);
      await second.getByTestId('live-view').waitFor();
      await expect
        .poll(() => second.getByTestId('level-left').textContent(), { timeout: WAIT_MS })
        .toMatch(/^about \d+/);
      await second.close();

      await page.emulateMedia({ colorScheme: 'dark' });
      await page.screenshot({ path: join(shots, 'finish-live-dark.png') });
      await page.emulateMedia({ colorScheme: 'light' });
      release();

      const results = page.getByTestId('results-view');
      await results.getByTestId('results-table').waitFor();
      expect(await results.getByTestId('results-row').count()).toBe(2);
      expect(consoleErrors).toEqual([]);
    },
  );

  it('renames a run (the folder keeps its name), with the one-line error for an empty label', async () => {
    const [folder] = (await readdir(out)).filter((d) => d.endsWith(`-${LABEL}`));
    expect(folder).toBeDefined();
    await page.getByTestId('runs-list').getByText(LABEL).click();
    await page.getByTestId('rename').click();
    await page.getByTestId('rename-input').fill('   ');
    await page.getByTestId('rename-save').click();
    expect(await page.getByTestId('rename-error').textContent()).toMatch(/give the run a label/);
    await page.getByTestId('rename-input').fill('renamed e2e');
    await page.getByTestId('rename-input').press('Enter');
    await page.getByTestId('runs-list').getByText('renamed e2e').waitFor();
    const record = JSON.parse(await readFile(join(out, folder as string, 'run.json'), 'utf8')) as { label: string };
    expect(record.label).toBe('renamed e2e');

    await page.getByTestId('results-view').getByTestId('results-table').waitFor();
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: join(shots, 'finish-results-dark.png'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'light' });

    // Browser mode has no file manager: the folder's path is shown to copy.
    await page.getByTestId('open-folder').click();
    expect(await page.getByTestId('run-path').inputValue()).toBe(join(out, folder as string));

    // The filter matches the engine, the model or the label.
    await page.getByTestId('runs-filter').fill('vllm');
    await page.getByText('No run matches the filter.').waitFor();
    await page.getByTestId('runs-filter').fill('sim renamed');
    await page.getByTestId('runs-list').getByText('renamed e2e').waitFor();
    await page.getByTestId('runs-filter').fill('');
    expect(consoleErrors).toEqual([]);
  });

  it('deletes a run after a confirmation, into .trash under the runs folder', async () => {
    const [folder] = (await readdir(out)).filter((d) => d.endsWith(`-${LABEL}`));
    await page.getByTestId('runs-list').getByText('renamed e2e').click();
    await page.getByTestId('delete').click();
    // Cancel first: nothing moves.
    await page.getByTestId('delete-cancel').click();
    expect(await readdir(out)).toContain(folder);
    await page.getByTestId('delete').click();
    await page.screenshot({ path: join(shots, 'finish-delete-confirm.png') });
    await page.getByTestId('delete-confirm').click();
    await page.getByTestId('trash-note').waitFor();
    await page.getByText('No runs yet.').waitFor();
    expect(await readdir(join(out, '.trash'))).toEqual([folder]);
    expect(await readdir(out)).not.toContain(folder);
    expect(consoleErrors).toEqual([]);
  });

  it('is readable in dark and light at 1280×720 and 2560×1440', async () => {
    for (const [w, h] of [
      [1280, 720],
      [2560, 1440],
    ] as const) {
      await page.setViewportSize({ width: w, height: h });
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        await page.getByTestId('nav-new').click();
        await page.getByTestId('new-run-form').waitFor();
        const bg = await page.evaluate<string>('getComputedStyle(document.documentElement).backgroundColor');
        const [r = 0, g = 0, b = 0] = (bg.match(/\d+/g) ?? []).map(Number);
        // Dark: a dark page; light: a light one.
        if (scheme === 'dark') expect(r + g + b).toBeLessThan(150);
        else expect(r + g + b).toBeGreaterThan(600);
        await page.screenshot({ path: join(shots, `finish-form-${scheme}-${w}x${h}.png`) });
      }
    }
    expect(consoleErrors).toEqual([]);
  });
});
