import { existsSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServebenchService } from '../../src/core/api.js';
import { defaultBenchmarkDeps } from '../../src/core/default-deps.js';
import { listPresets } from '../../src/core/servers/presets.js';
import { createSettingsStore } from '../../src/core/settings/settings-store.js';
import type { UiServer } from '../../src/core/ui-server/index.js';
import { tabThrough, unnamed } from './a11y-checks.js';
import { CHROMIUM } from './chromium.js';
import { openAppPage } from './app-page.js';
import { ensureBuilt } from './renderer-build.js';

const root = resolve(import.meta.dirname, '..', '..');
const fixtures = join(root, 'test', 'fixtures', 'runs');
const CLOSED = '20261201T103727Z-closed';
const SWEEP = '20261201T103738Z-sweep';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.warn(`skipping the a11y e2e test: ${CHROMIUM} is absent (apt-get install chromium)`);

/** Whether the element has the keyboard focus. */
const focused = (el: Locator): Promise<boolean> => el.evaluate((e) => e === e.ownerDocument.activeElement);
/** The focused element's data-testid or role. */
const focusedAttr = (page: Page, name: string): Promise<string | null> =>
  page.evaluate(`document.activeElement?.getAttribute(${JSON.stringify(name)}) ?? null`);
/** The page's CSS zoom. */
const zoom = (page: Page): Promise<string> => page.evaluate('getComputedStyle(document.documentElement).zoom');

describe.skipIf(!haveChromium)('labels, keyboard and large windows in `servebench ui` (headless Chromium)', () => {
  let out: string;
  let settingsDir: string;
  let server: UiServer;
  let browser: Browser;
  let page: Page;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    ensureBuilt(root);
    out = await mkdtemp(join(tmpdir(), 'sb-e2e-a11y-'));
    settingsDir = await mkdtemp(join(tmpdir(), 'sb-e2e-a11y-settings-'));
    for (const [id, name] of [
      [CLOSED, 'closed'],
      [SWEEP, 'sweep'],
    ] as const) {
      await cp(join(fixtures, name), join(out, id), { recursive: true });
    }
    const service = createServebenchService({
      outDir: out,
      deps: defaultBenchmarkDeps(),
      listPresets: () => listPresets(),
      settings: createSettingsStore({ dir: settingsDir, runsDir: out }),
    });
    ({ server, browser, page } = await openAppPage(service, consoleErrors, { viewport: { width: 1280, height: 720 } }));
  }, 300_000); // above the bounds of the two builds ensureBuilt may run

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (out) await rm(out, { recursive: true, force: true });
    if (settingsDir) await rm(settingsDir, { recursive: true, force: true });
  });

  it('names every control of the form (each workload, the optional rows, the folded settings)', async () => {
    await page.goto(server.url);
    await page.getByTestId('new-run-form').waitFor();
    await page.locator('[data-settings="saved"]').waitFor();
    await page.getByTestId('add-env').click();
    await page.getByTestId('add-vary').click();
    for (const summary of await page.getByTestId('new-run-form').locator('details > summary').all()) {
      await summary.click();
    }
    expect(await unnamed(page)).toEqual([]);
    for (const workload of ['file', 'shared-prefix', 'multi-turn', 'trace']) {
      await page.getByTestId(`workload-${workload}`).check({ force: true });
      expect(await unnamed(page), workload).toEqual([]);
    }
    await page.getByTestId('workload-synthetic').check({ force: true });
    // The runs folder's editor in the sidebar.
    await page.getByTestId('runs-folder-change').click();
    expect(await unnamed(page)).toEqual([]);
    // Its error is the rule in words, without the setting's internal name in front.
    await page.getByTestId('runs-folder-input').fill('runs');
    await page.getByTestId('runs-folder-save').click();
    expect(await page.getByTestId('runs-folder-error').textContent()).toBe(
      'the runs folder must be a full path such as /data/servebench/runs',
    );
    expect(consoleErrors).toEqual([]);
  });

  it('reaches every control of the form with Tab, each with a visible focus ring', async () => {
    await page.reload();
    await page.getByTestId('new-run-form').waitFor();
    await page.locator('[data-settings="saved"]').waitFor();
    const { missed, noRing } = await tabThrough(page);
    expect(missed).toEqual([]);
    expect(noRing).toEqual([]);
  });

  it('puts a field error under the field and moves the focus there', async () => {
    await page.getByTestId('concurrency').fill('1,x');
    await page.getByTestId('start').click();
    const field = page.getByTestId('concurrency');
    const line = page.locator('label.field', { has: field }).getByTestId('field-error');
    expect(await line.textContent()).toMatch(
      /^Concurrency must be a comma-separated list of positive integers written plainly \(got '1,x'\)$/,
    );
    expect(await focused(field)).toBe(true);
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    expect(await field.getAttribute('aria-describedby')).toBe(await line.getAttribute('id'));
    await field.fill('1,2');
    await page.getByTestId('start').focus();
  });

  it('names and reaches every control of a run, its actions and its Export menu', async () => {
    await page.getByTestId('runs-list').getByText('sweep').click();
    await page.getByTestId('results-view').getByTestId('results-table').waitFor();
    await page.getByTestId('timeline').waitFor();
    expect(await unnamed(page)).toEqual([]);
    const { missed, noRing } = await tabThrough(page);
    expect(missed).toEqual([]);
    expect(noRing).toEqual([]);

    // Export: the menu takes the focus, Escape gives it back, tabbing away closes it.
    await page.getByTestId('export-button').focus();
    await page.keyboard.press('Enter');
    expect(await unnamed(page)).toEqual([]);
    expect(await focusedAttr(page, 'role')).toBe('menuitem');
    await page.keyboard.press('Escape');
    expect(await page.getByRole('menu').count()).toBe(0);
    expect(await focused(page.getByTestId('export-button'))).toBe(true);
    await page.keyboard.press('Enter');
    await page.getByRole('menu').waitFor();
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    expect(await page.getByRole('menu').count()).toBe(0);
    // A focus that goes nowhere (Safari does not focus a pressed button) keeps the menu for the click to land;
    // a click elsewhere closes it.
    await page.getByTestId('export-button').click();
    await page.getByRole('menu').waitFor();
    await page.evaluate('document.activeElement?.blur()');
    expect(await page.getByRole('menu').count()).toBe(1);
    await page.getByTestId('results-table').click();
    expect(await page.getByRole('menu').count()).toBe(0);
    expect(consoleErrors).toEqual([]);
  });

  it('confirms a delete from the keyboard: the focus on Cancel, Escape backs out to the Delete button', async () => {
    await page.getByTestId('delete').focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('delete-confirm').waitFor();
    expect(await unnamed(page)).toEqual([]);
    expect(await focused(page.getByTestId('delete-cancel'))).toBe(true);
    await page.keyboard.press('Escape');
    expect(await page.getByTestId('delete-confirm').count()).toBe(0);
    expect(await focused(page.getByTestId('delete'))).toBe(true);

    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    expect(await focusedAttr(page, 'data-testid')).toBe('rename');
    await page.keyboard.press('Enter');
    expect(await unnamed(page)).toEqual([]);
    // An empty label: the line is tied to the input, which keeps the sidebar's width.
    await page.getByTestId('rename-input').fill(' ');
    await page.getByTestId('rename-input').press('Enter');
    const renameError = page.getByTestId('rename-error');
    expect((await renameError.textContent())?.trim()).toBe('give the run a label');
    expect(await page.getByTestId('rename-input').getAttribute('aria-describedby')).toBe(
      await renameError.getAttribute('id'),
    );
    const input = await page.getByTestId('rename-input').boundingBox();
    const actions = await page.getByTestId('run-actions').boundingBox();
    expect((input?.width ?? 0) / (actions?.width ?? 1)).toBeGreaterThan(0.6);
    await page.getByTestId('rename-input').press('Escape');
    expect(await page.getByTestId('rename-input').count()).toBe(0);
    expect(await focused(page.getByTestId('rename'))).toBe(true);
  });

  it('names every control of the comparison', async () => {
    const picks = page.getByTestId('compare-pick');
    await picks.nth(0).check();
    await picks.nth(1).check();
    await page.getByTestId('compare-button').click();
    await page.getByTestId('compare-frame').waitFor();
    expect(await unnamed(page)).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });

  it('is larger on a 2560×1440 window, and the chart cursor stays under the mouse', async () => {
    await page.setViewportSize({ width: 2560, height: 1440 });
    await page.getByTestId('runs-list').getByText('sweep').click();
    const plot = page.getByTestId('timeline').locator('.u-over').first();
    await plot.waitFor();
    expect(await zoom(page)).toBe('1.25');
    // The sidebar still ends at the window's bottom (lengths in vh are zoomed too).
    const aside = await page.locator('aside').boundingBox();
    expect(Math.round((aside?.y ?? 0) + (aside?.height ?? 0))).toBeLessThanOrEqual(1440);
    await plot.scrollIntoViewIfNeeded();
    const box = await plot.boundingBox();
    if (!box) throw new Error('the timeline has no plot area');
    const x = box.x + box.width / 2;
    await page.mouse.move(x, box.y + box.height / 2);
    const cursor = page.getByTestId('timeline').locator('.u-cursor-x').first();
    await expect.poll(async () => Math.abs(((await cursor.boundingBox())?.x ?? 0) - x)).toBeLessThan(2);
    await page.setViewportSize({ width: 1280, height: 720 });
    expect(await zoom(page)).toBe('1');
    expect(consoleErrors).toEqual([]);
  });

  it("draws the cursor's horizontal line only on the chart under the mouse, its vertical line on all", async () => {
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.getByTestId('runs-list').getByText('sweep').click();
    const timeline = page.getByTestId('timeline');
    const over = timeline.locator('[data-panel="e2e"] .u-over');
    await over.waitFor();
    await over.scrollIntoViewIfNeeded();
    const box = await over.boundingBox();
    if (!box) throw new Error('the E2E chart has no plot area');
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    // uPlot parks a hidden cursor line outside its plot area: inside means drawn.
    const lines = (): Promise<Array<[string, boolean, boolean]>> =>
      timeline.locator('[data-panel]').evaluateAll((panels) =>
        panels.map((p) => {
          const plot = p.querySelector('.u-over')?.getBoundingClientRect();
          const y = p.querySelector('.u-cursor-y')?.getBoundingClientRect();
          const x = p.querySelector('.u-cursor-x')?.getBoundingClientRect();
          const inside = (v: number | undefined, lo = 0, hi = 0): boolean => v !== undefined && v >= lo && v <= hi;
          return [
            p.getAttribute('data-panel') ?? '',
            inside(y?.top, plot?.top, plot?.bottom),
            inside(x?.left, plot?.left, plot?.right),
          ];
        }),
      );
    await expect.poll(async () => (await lines()).filter(([, h]) => h).map(([id]) => id)).toEqual(['e2e']);
    const all = await lines();
    expect(all.length).toBeGreaterThan(3);
    expect(all.every(([, , vertical]) => vertical)).toBe(true);
    expect(consoleErrors).toEqual([]);
  });

  it('shows the figures of the stretch chosen on the timeline, and the keys that choose it', async () => {
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.getByTestId('runs-list').getByText('sweep').click();
    const timeline = page.getByTestId('timeline');
    const keys = timeline.getByTestId('timeline-keys');
    await keys.waitFor();
    expect(await keys.locator('kbd').allTextContents()).toEqual(['+', '−', '←', '→', '0', 'Esc']);
    const over = timeline.locator('[data-panel="ttft"] .u-over');
    await over.focus();
    await page.keyboard.press('+');
    const figures = page.getByTestId('window-figures');
    const requests = figures.getByTestId('window-requests').locator('dd');
    await requests.waitFor();
    expect(Number((await requests.textContent())?.replace(/[^\d]/g, ''))).toBeGreaterThan(0);
    expect(await figures.getByTestId('window-ttft').locator('dd').textContent()).toMatch(
      /^\S+ ms \/ \S+ ms \/ \S+ ms$/,
    );
    expect(await figures.getByTestId('window-telemetry').count()).toBeGreaterThan(0);
    await figures.getByRole('button', { name: /Whole run/ }).click();
    await expect.poll(() => figures.count()).toBe(0);
    expect(await timeline.locator('.plot').first().getAttribute('data-zoom')).toBe('');
    expect(consoleErrors).toEqual([]);
  });

  it('zooms and pans a time chart from the keyboard as a drag and a double click do', async () => {
    await page.setViewportSize({ width: 1280, height: 720 });
    await page.getByTestId('runs-list').getByText('sweep').click();
    const timeline = page.getByTestId('timeline');
    const over = timeline.locator('.u-over').first();
    await over.waitFor();
    expect(await over.getAttribute('aria-label')).toMatch(/press \+ and − to zoom, arrow keys to pan, 0 to show all$/);
    const plot = timeline.locator('.plot').first();
    const span = async (): Promise<[number, number] | null> => {
      const z = await plot.getAttribute('data-zoom');
      return z ? (z.split(',').map(Number) as [number, number]) : null;
    };
    await over.focus();
    expect(await focused(over)).toBe(true);
    await page.keyboard.press('+');
    const zoomed = await span();
    expect(zoomed).not.toBeNull();
    // The charts sharing its cursor (GPU clock, temperature, power…) zoom with it, as with a drag.
    const plots = timeline.locator('.plot');
    const n = await plots.count();
    expect(n).toBeGreaterThan(1);
    for (let i = 0; i < n; i++) expect(await plots.nth(i).getAttribute('data-zoom')).toBe(zoomed!.join(','));
    await page.keyboard.press('ArrowRight');
    const panned = await span();
    expect(panned![0]).toBeGreaterThan(zoomed![0]);
    expect(panned![1] - panned![0]).toBeCloseTo(zoomed![1] - zoomed![0], 6);
    await page.keyboard.press('-');
    await page.keyboard.press('-');
    expect(await span()).toBeNull();
    await page.keyboard.press('+');
    await page.keyboard.press('0');
    expect(await span()).toBeNull();
    expect(consoleErrors).toEqual([]);
  });

  it('rebuilds a shown chart when the window crosses into the large size, as if it were drawn there', async () => {
    await page.setViewportSize({ width: 1280, height: 720 });
    const timeline = page.getByTestId('timeline');
    // The plot area starts after the y axis, whose width follows the zoom's font: its offset shows the build's zoom.
    const axisOffset = async (): Promise<number> => {
      const host = await timeline.locator('.plot').first().boundingBox();
      const over = await timeline.locator('.u-over').first().boundingBox();
      return Math.round((over?.x ?? 0) - (host?.x ?? 0));
    };
    await page.getByTestId('runs-list').getByText('sweep').click();
    await timeline.locator('.u-over').first().waitFor();
    const small = await axisOffset();
    await page.setViewportSize({ width: 2560, height: 1440 });
    await expect.poll(axisOffset).not.toBe(small);
    const resized = await axisOffset();
    await page.getByTestId('runs-list').getByText('closed').click();
    await page.getByTestId('runs-list').getByText('sweep').click();
    await timeline.locator('.u-over').first().waitFor();
    expect(await axisOffset()).toBe(resized);
    await page.setViewportSize({ width: 1280, height: 720 });
    expect(consoleErrors).toEqual([]);
  });
});
