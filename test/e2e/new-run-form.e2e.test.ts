import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServebenchService } from '../../src/core/api.js';
import { defaultBenchmarkDeps } from '../../src/core/default-deps.js';
import { ENGINE_PICKER, FORM_FIELDS, shows } from '../../src/renderer/lib/run-form.js';
import { CHROMIUM } from './chromium.js';
import { openAppPage } from './app-page.js';
import { ensureBuilt } from './renderer-build.js';

const root = resolve(import.meta.dirname, '..', '..');
const shots = join(root, 'test-results');
const haveChromium = existsSync(CHROMIUM);

describe.skipIf(!haveChromium)('the new-run form, made from the settings, at 1024×640 (headless Chromium)', () => {
  const consoleErrors: string[] = [];
  let app: Awaited<ReturnType<typeof openAppPage>> & { out: string };
  let page: Page;

  beforeAll(async () => {
    ensureBuilt(root);
    mkdirSync(shots, { recursive: true });
    const out = await mkdtemp(join(tmpdir(), 'sb-form-'));
    const service = createServebenchService({ outDir: out, deps: defaultBenchmarkDeps(), listPresets: () => [] });
    app = { ...(await openAppPage(service, consoleErrors, { viewport: { width: 1024, height: 640 } })), out };
    page = app.page;
    await page.goto(app.server.url);
    await page.getByTestId('new-run-form').waitFor();
  }, 300_000); // above the bounds of the two builds ensureBuilt may run

  afterAll(async () => {
    await app?.browser.close();
    await app?.server.close();
    if (app) await rm(app.out, { recursive: true, force: true });
  });

  const openAll = async (open: boolean): Promise<void> => {
    for (const d of await page.locator('details.more').all())
      await d.evaluate((e, o) => ((e as unknown as { open: boolean }).open = o), open);
  };

  it.each(ENGINE_PICKER.map((e) => e.id))(
    '%s: a control for every setting the engine has, each option once',
    async (engine) => {
      await page.getByTestId(`engine-${engine}`).check({ force: true });
      await page.getByTestId('engine-detection').or(page.getByTestId('start')).first().waitFor();
      await page.screenshot({ path: join(shots, `form-${engine}.png`) });
      await openAll(true);
      for (const f of FORM_FIELDS.filter((x) => shows({ engine, diffusion: false }, x))) {
        // A workload's fields are in the Workload section, for the workload chosen.
        if (
          [
            'prompts',
            'prompt-lengths',
            'output-lengths',
            'prefix-groups',
            'prefix-len',
            'turns',
            'think-time-ms',
            'trace',
            'trace-speed',
          ].includes(f.flag)
        )
          continue;
        expect(await page.getByTestId(f.flag).count(), `${engine}: --${f.flag}`).toBe(1);
      }
      for (const select of await page.locator('[data-testid="new-run-form"] select').all()) {
        const options = await select
          .locator('option')
          .evaluateAll((os) =>
            os.map((o) => [
              (o as unknown as { value: string }).value,
              o.textContent?.replace(/ \(default\)$/, '') ?? '',
            ]),
          );
        const shown = options.map(([v, t]) => (v === '' ? t : v));
        expect(new Set(shown).size, `${engine}: ${JSON.stringify(options)}`).toBe(shown.length);
      }
      await openAll(false);
    },
  );

  it('names a missing setting by its label, never by its flag', async () => {
    await page.getByTestId('engine-vllm').check({ force: true });
    await page.getByTestId('start').click();
    const error = page.getByTestId('form-error');
    await error.waitFor();
    expect(await error.textContent()).toBe(
      'vLLM needs a model: fill in Model (a hub id like org/name or a local folder)',
    );
    await page.screenshot({ path: join(shots, 'form-vllm-no-model.png') });
    await page.getByTestId('engine-attach').check({ force: true });
    await page.getByTestId('start').click();
    await page
      .getByTestId('field-error')
      .getByText('Attach URL needs Server URL, e.g. http://127.0.0.1:8000')
      .waitFor();
    expect(consoleErrors).toEqual([]);
  });

  it('shows the run estimate before Start and follows the fields', async () => {
    await page.getByTestId('engine-sim').check({ force: true });
    await openAll(true);
    await page.getByTestId('rate').fill('2,4');
    await page.getByTestId('requests-per-round').fill('40');
    await page.getByTestId('warmup').fill('0');
    await page.getByTestId('rounds').fill('1');
    const time = page.getByTestId('run-estimate-time');
    // 40 requests at 2/s, then 40 at 4/s: the core's plan, at the arrival rate.
    await page
      .getByTestId('run-estimate-sends')
      .getByText('2 levels × 1 round: 80 requests, 0 of them warm-up')
      .waitFor();
    await time.getByText('Time: about 30 s at the arrival rate.').waitFor();
    await page.getByTestId('rate').fill('4');
    await time.getByText('Time: about 10 s at the arrival rate.').waitFor();
    await page.getByTestId('run-estimate').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, 'form-estimate.png') });
    // A closed loop goes at the server's pace: no time is made up before a level is measured.
    await page.getByTestId('rate').fill('');
    await time.getByText(/known once the first level is measured/).waitFor();
    await page.getByTestId('requests-per-round').fill('');
    await page.getByTestId('warmup').fill('');
    await page.getByTestId('rounds').fill('');
    await openAll(false);
    expect(consoleErrors).toEqual([]);
  });

  it('keeps the API key in a password field', async () => {
    await openAll(true);
    expect(await page.getByTestId('api-key').getAttribute('type')).toBe('password');
    await openAll(false);
  });
});
