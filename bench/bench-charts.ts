// npm run bench:charts — whether the app's charts stay interactive with 100,000 points: the app's Timeline (uPlot:
// per-request latency, GPU clock, temperature, power, engine queue, KV cache) is built into a small page by vite,
// fed a synthetic run of BENCH_POINTS requests and as many GPU and engine samples, and timed in Debian's chromium:
// the first draw of every chart of the stack, a zoom to 10 % of the span and back (setScale) per chart, and 100 cursor moves
// (each also moves the five charts that share the cursor). Prints one line per figure, then a JSON line.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { chromium } from 'playwright-core';
import { build } from 'vite';
import { packageRoot } from '../src/core/package-root.js';

const CHROMIUM = '/usr/bin/chromium';
const SIZES = (process.env.BENCH_POINTS ?? '10000,100000').split(',').map(Number);
const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };

if (!existsSync(CHROMIUM)) {
  console.log(`bench:charts: skipped (${CHROMIUM} is absent: apt-get install chromium)`);
  process.exit(0);
}

const out = await mkdtemp(join(tmpdir(), 'sb-bench-charts-'));
const server = createServer((req, res) => {
  const path = normalize(decodeURIComponent((req.url ?? '/').split('?')[0] ?? '/')).replace(/^(\.\.[/\\])+/, '');
  const file = join(out, path === '/' ? 'index.html' : path);
  readFile(file)
    .then((body) => {
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    })
    .catch(() => {
      res.writeHead(404);
      res.end();
    });
});
try {
  await build({
    configFile: false,
    root: join(packageRoot(), 'bench', 'charts-harness'),
    base: './',
    plugins: [svelte()],
    logLevel: 'warn',
    build: { outDir: out, emptyOutDir: true },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
  try {
    for (const n of SIZES) {
      // A fresh page per size: one size's garbage does not slow the next.
      const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(url);
      await page.waitForFunction('typeof window.sbChartsBench === "function"');
      const figures = (await page.evaluate(`window.sbChartsBench(${n})`)) as {
        prepMs: number;
        firstDrawMs: number;
        zoom: Record<string, { zoomInMs: number; wholeMs: number }>;
        cursorMeanMs: number;
        cursorP95Ms: number;
        cursorMaxMs: number;
      };
      if (process.env.BENCH_CHARTS_SHOT) await page.screenshot({ path: `${process.env.BENCH_CHARTS_SHOT}-${n}.png` });
      await page.close();
      if (errors.length > 0) throw new Error(`the page failed: ${errors.join('; ')}`);
      console.log(`${n.toLocaleString('en')} points per chart`);
      console.log(`  chart data from the requests      ${figures.prepMs} ms`);
      console.log(`  first draw of every chart          ${figures.firstDrawMs} ms`);
      for (const [chart, z] of Object.entries(figures.zoom))
        console.log(`  zoom to 10 % / back: ${chart.padEnd(24)} ${z.zoomInMs} / ${z.wholeMs} ms`);
      console.log(
        `  cursor move (100 moves, all charts) mean ${figures.cursorMeanMs} ms, p95 ${figures.cursorP95Ms} ms, max ${figures.cursorMaxMs} ms`,
      );
      console.log(JSON.stringify(figures));
    }
  } finally {
    await browser.close();
  }
} finally {
  server.close();
  await rm(out, { recursive: true, force: true });
}
