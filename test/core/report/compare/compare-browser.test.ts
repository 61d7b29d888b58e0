import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareSeries } from '../../../../src/core/report/compare/compare.js';
import { compareHtml } from '../../../../src/core/report/compare/html.js';
import { readCompareInputs } from '../../../../src/core/report/compare/read-input.js';
import { fixtureDir } from '../fixtures.js';
import { CHROMIUM, CHROMIUM_ARGS, openOffline } from '../offline-page.js';
import { compareFixtures, slowedCopy } from './helpers.js';

const haveChromium = existsSync(CHROMIUM);
if (!haveChromium)
  console.warn(`skipping the comparison's browser test: ${CHROMIUM} is absent (apt-get install chromium)`);
const shots = resolve(import.meta.dirname, '..', '..', '..', '..', 'test-results');

describe.skipIf(!haveChromium)('the HTML comparison in headless Chromium', () => {
  let browser: Browser;
  let tmp: string;
  let slow: string;

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    tmp = await mkdtemp(join(tmpdir(), 'sb-compare-html-'));
    slow = await slowedCopy(1.6, (r) => {
      r.label = 'closed-slow';
      r.environment.engine.version = '0.12.0';
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: CHROMIUM_ARGS,
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await rm(tmp, { recursive: true, force: true });
    await rm(dirname(slow), { recursive: true, force: true });
  });

  it.each([
    ['runs', () => [fixtureDir('closed'), slow, join(compareFixtures, 'vllm-detailed.json')]],
    ['sweep', () => [fixtureDir('sweep')]],
  ] as const)('%s: not blank, overlaid charts drawn, nothing fetched from any other address', async (name, inputs) => {
    const file = join(tmp, `${name}.html`);
    const c = compareSeries(await readCompareInputs(inputs()));
    await writeFile(file, compareHtml(c, new Date('2026-12-01T12:00:00Z')));
    for (const scheme of ['light', 'dark'] as const) {
      const { page, outside, errors } = await openOffline(browser, file, scheme);
      const text = await page.locator('body').innerText();
      expect(text).toContain('Conditions');
      expect(text).toContain('95 % CI of the difference');
      const charts = await page.$$eval('figure.chart svg', (svgs) =>
        svgs.map((s) => {
          const box = s.getBoundingClientRect();
          const lines = new Set([...s.querySelectorAll('g.s')].map((g) => g.getAttribute('class')));
          return { id: s.parentElement?.id ?? '', width: box.width, height: box.height, lines: lines.size };
        }),
      );
      // The sweep fixture's 16-token outputs came whole in one diffusion block: no TPOT, so its chart has no data.
      const blocks = name === 'sweep';
      expect(charts.map((x) => x.id)).toEqual([
        'cmp-throughput-concurrency',
        'cmp-ttft-concurrency',
        ...(blocks ? [] : ['cmp-tpot-concurrency']),
        'cmp-e2e-concurrency',
      ]);
      if (blocks) expect(await page.locator('#cmp-tpot-concurrency').innerText()).toContain('No data');
      for (const x of charts) {
        expect(x.width, x.id).toBeGreaterThan(200);
        expect(x.height, x.id).toBeGreaterThan(100);
        // One colour per series, drawn over each other.
        expect(x.lines, x.id).toBeGreaterThanOrEqual(c.series.length);
      }
      const verdictCells = await page.$$eval('td.faster, td.slower, td.same', (tds) => tds.length);
      expect(verdictCells).toBeGreaterThan(0);
      await page.screenshot({ path: join(shots, `compare-${name}-${scheme}.png`), fullPage: true });
      expect(outside).toEqual([]);
      expect(errors).toEqual([]);
      await page.close();
    }
  });
});
