import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
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
const RUN_TEST_MS = 300_000;

/** Seconds of an elapsed time as the live view writes it ("42s", "1m 05s"). */
function seconds(text: string): number {
  const m = /(?:(\d+)m )?(\d+)s$/.exec(text.trim());
  if (!m) throw new Error(`no elapsed time in "${text}"`);
  return Number(m[1] ?? 0) * 60 + Number(m[2]);
}

describe.skipIf(!haveChromium)('live progress and the cancel confirmation in headless Chromium (simulator)', () => {
  let out: string;
  let server: UiServer;
  let browser: Browser;
  let page: Page;
  let release: () => void = () => undefined;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    ensureBuilt(root);
    mkdirSync(shots, { recursive: true });
    out = await mkdtemp(join(tmpdir(), 'sb-e2e-progress-'));
    // Held while the second level builds its prompts: the first level's pace is known, the view stays on that phase.
    const gate = holdEvents(
      createServebenchService({ outDir: out, deps: defaultBenchmarkDeps(), listPresets: () => listPresets() }),
      (event) => event.type === 'phase' && event.phase === 'prompts' && event.levelIndex === 1 && (event.done ?? 0) > 0,
    );
    release = gate.release;
    ({ server, browser, page } = await openAppPage(gate.service, consoleErrors, {
      viewport: { width: 1024, height: 640 },
    }));
  }, 300_000);

  afterAll(async () => {
    release();
    await browser?.close();
    await server?.close();
    if (out) await rm(out, { recursive: true, force: true });
  });

  it(
    'shows each phase with its count, an estimate, an elapsed time a reload keeps, and confirms a cancel',
    { timeout: RUN_TEST_MS },
    async () => {
      await page.goto(server.url);
      await page.getByTestId('new-run-form').waitFor();
      await page.getByTestId('engine-sim').check({ force: true });
      // Two levels: a quick one, then one whose long answers keep the run going while the test cancels it.
      await page.getByTestId('concurrency').fill('1');
      await page.getByTestId('input-len').fill('32');
      await page.getByTestId('output-len').fill('16,2000');
      await page.getByTestId('rounds').fill('1');
      await page.getByTestId('requests-per-round').fill('8');
      await page.getByTestId('warmup').fill('2');
      await page.getByTestId('label').fill('e2e-progress');
      await page.getByTestId('start').click();

      const live = page.getByTestId('live-view');
      const phase = live.getByTestId('run-phase');
      await phase.getByText(/building prompts \d+\/10/).waitFor();
      expect(await phase.textContent()).toMatch(/^level 2: building prompts \d+\/10$/);
      // From the first level's pace, scaled to the second's longer answers: a figure, not "estimating…".
      expect(await live.getByTestId('run-left').textContent()).toMatch(/^about \d+ (s|min \d+ s)$/);
      const prompts = live.getByRole('progressbar', { name: 'level 2 prompts built' });
      expect(await prompts.getAttribute('aria-valuemax')).toBe('10');

      await page.emulateMedia({ colorScheme: 'light' });
      await page.screenshot({ path: join(shots, 'live-progress-light.png') });
      await page.emulateMedia({ colorScheme: 'dark' });
      await page.screenshot({ path: join(shots, 'live-progress-dark.png') });
      await page.emulateMedia({ colorScheme: 'light' });

      // The run started seconds ago (the simulator's start, the first level): a reload keeps counting from then.
      const elapsed = async (): Promise<number> =>
        seconds(((await live.locator('.title .muted').textContent()) ?? '').split('·').at(-1) ?? '');
      await live
        .locator('.title .muted')
        .filter({ hasText: /[1-9]\d*s$/ })
        .waitFor();
      const before = await elapsed();
      await page.reload();
      await page.getByTestId('live-view').getByTestId('run-phase').waitFor();
      expect(await elapsed()).toBeGreaterThanOrEqual(before);

      // Cancel asks first; Escape closes the question and gives the focus back to the button.
      const cancel = page.getByTestId('cancel');
      await cancel.click();
      await page.getByTestId('cancel-confirm-box').waitFor();
      expect(await page.getByTestId('cancel-keep').evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
      await page.screenshot({ path: join(shots, 'live-cancel-confirm.png') });
      await page.keyboard.press('Escape');
      await cancel.waitFor();
      expect(await page.getByTestId('cancel-confirm-box').count()).toBe(0);
      expect(await cancel.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
      // "Keep running" keeps it running.
      await cancel.click();
      await page.getByTestId('cancel-keep').click();
      expect(await page.getByTestId('cancel-confirm-box').count()).toBe(0);
      // "Stop run" stops it: what was measured is kept, the run reads as cancelled.
      release();
      await page
        .getByTestId('live-view')
        .getByText(/measuring round 1/)
        .first()
        .waitFor();
      await cancel.click();
      await page.getByTestId('cancel-confirm').click();
      const results = page.getByTestId('results-view');
      await results.getByTestId('results-table').waitFor();
      expect(await results.getByTestId('results-row').count()).toBeGreaterThanOrEqual(1);
      await results
        .getByText(/cancelled/i)
        .first()
        .waitFor();
      expect(consoleErrors).toEqual([]);
    },
  );
});
