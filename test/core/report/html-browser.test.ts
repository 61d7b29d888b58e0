import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { htmlReport } from '../../../src/core/report/html.js';
import { loadRunFolder } from '../../../src/core/report/load-run-folder.js';
import { printPdfWithChromium } from '../../../src/core/report/pdf.js';
import { FIXTURES, fixtureDir } from './fixtures.js';
import { CHROMIUM, CHROMIUM_ARGS, openOffline } from './offline-page.js';

const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.warn(`skipping the report's browser test: ${CHROMIUM} is absent (apt-get install chromium)`);
const shots = resolve(import.meta.dirname, '..', '..', '..', 'test-results');

function havePdftoppm(): boolean {
  try {
    execFileSync('pdftoppm', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(!haveChromium)('the HTML report in headless Chromium', () => {
  let browser: Browser;
  let tmp: string;

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    tmp = await mkdtemp(join(tmpdir(), 'sb-report-html-'));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: CHROMIUM_ARGS,
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await rm(tmp, { recursive: true, force: true });
  });

  it.each(FIXTURES)('%s: not blank, every chart drawn, nothing fetched from any other address', async (name) => {
    const file = join(tmp, `${name}.html`);
    await writeFile(file, htmlReport(await loadRunFolder(fixtureDir(name))));
    for (const scheme of ['light', 'dark'] as const) {
      const { page, outside, errors } = await openOffline(browser, file, scheme);
      const text = await page.locator('body').innerText();
      expect(text).toContain('Results');
      expect(text.length).toBeGreaterThan(1000);
      const charts = await page.$$eval('figure.chart svg', (svgs) =>
        svgs.map((s) => {
          const box = s.getBoundingClientRect();
          const marks = s.querySelectorAll('circle, path.req, path.line').length;
          return { id: s.parentElement?.id ?? '', width: box.width, height: box.height, marks };
        }),
      );
      // The sweep fixture's outputs came in one diffusion block each: no per-user speed, and the Pareto says so.
      const blocks = name === 'sweep';
      expect(charts.map((c) => c.id)).toEqual([
        'chart-throughput',
        'chart-ttft',
        'chart-tpot',
        'chart-e2e',
        ...(blocks ? [] : ['chart-pareto']),
      ]);
      if (blocks) expect(await page.locator('#chart-pareto').innerText()).toContain('Not shown: 4 levels');
      for (const c of charts) {
        expect(c.width, c.id).toBeGreaterThan(200);
        expect(c.height, c.id).toBeGreaterThan(100);
        expect(c.marks, c.id).toBeGreaterThan(0);
      }
      // The timeline: the embedded spec drawn by the inlined uPlot, one canvas per panel with points, painted.
      const panels = await page.$$eval('#timeline-panels [data-panel]', (divs) =>
        divs.map((d) => {
          const canvas = d.querySelector('canvas');
          const box = canvas?.getBoundingClientRect();
          const ctx = canvas?.getContext('2d');
          const pixels =
            canvas && ctx ? ctx.getImageData(0, 0, canvas.width, canvas.height).data : new Uint8ClampedArray();
          let painted = 0;
          for (let i = 3; i < pixels.length; i += 4) if ((pixels[i] as number) > 0) painted++;
          return { id: d.getAttribute('data-panel'), width: box?.width ?? 0, height: box?.height ?? 0, painted };
        }),
      );
      const declared = (await page.getAttribute('#chart-timeline', 'data-panels'))?.split(' ') ?? [];
      expect(panels.map((p) => p.id)).toEqual(declared);
      expect(declared.slice(0, 3)).toEqual(['ttft', 'e2e', 'output-rate']);
      for (const p of panels) {
        expect(p.width, p.id ?? '').toBeGreaterThan(600);
        expect(p.height, p.id ?? '').toBeGreaterThan(60);
        expect(p.painted, p.id ?? '').toBeGreaterThan(500);
      }
      const background = await page.evaluate<string>('getComputedStyle(document.body).backgroundColor');
      expect(background).toBe(scheme === 'dark' ? 'rgb(13, 17, 23)' : 'rgb(255, 255, 255)');
      await page.screenshot({ path: join(shots, `report-${name}-${scheme}.png`), fullPage: true });
      expect(outside).toEqual([]);
      expect(errors).toEqual([]);
      await page.close();
    }
  });

  it.each([
    ['A4', 210],
    ['Letter', 215.9],
  ] as const)(
    'fits the printable width of %s paper, and a simulated run says SIMULATED on every page',
    async (paper, widthMm) => {
      const file = join(tmp, `print-${paper}.html`);
      await writeFile(file, htmlReport(await loadRunFolder(fixtureDir('sweep'))));
      // The printable width: the paper less the report's 10 mm side margins (96 CSS px per inch).
      const px = Math.floor(((widthMm - 20) / 25.4) * 96);
      const page = await browser.newPage({ viewport: { width: px, height: 1000 } });
      await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
      await page.emulateMedia({ media: 'print' });
      const widths = await page.evaluate<{ scroll: number; client: number }>(
        '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
      );
      expect(widths.scroll).toBeLessThanOrEqual(widths.client);
      const stamp = await page.evaluate<string>("getComputedStyle(document.querySelector('.sim-stamp')).position");
      expect(stamp).toBe('fixed'); // a fixed element is printed on every page
      const pdf = await page.pdf({ format: paper });
      expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
      await writeFile(join(shots, `report-sweep-${paper}.pdf`), pdf);
      await page.close();
    },
  );

  it('prints to PDF with chromium --print-to-pdf; its first page is turned into a PNG beside the test output', async () => {
    const html = htmlReport(await loadRunFolder(fixtureDir('closed')));
    const pdf = await printPdfWithChromium(html, CHROMIUM);
    expect(Buffer.from(pdf.subarray(0, 5)).toString()).toBe('%PDF-');
    const file = join(shots, 'report-closed.pdf');
    await writeFile(file, pdf);
    if (!havePdftoppm()) {
      console.warn('skipping the PDF page image: pdftoppm is absent (apt-get install -y poppler-utils)');
      return;
    }
    execFileSync('pdftoppm', [
      '-png',
      '-r',
      '80',
      '-f',
      '1',
      '-l',
      '1',
      '-singlefile',
      file,
      join(shots, 'report-closed-page1'),
    ]);
    expect((await stat(join(shots, 'report-closed-page1.png'))).size).toBeGreaterThan(10_000);
    expect((await readFile(file)).length).toBeGreaterThan(10_000);
  });
});
