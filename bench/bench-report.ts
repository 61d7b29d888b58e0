// npm run bench:report — how big the HTML report of a 10,000-request run is and how fast it is made and drawn:
// a synthetic run folder (5 levels x 2,000 requests, GPU sampled every 500 ms) is written from the closed-loop
// fixture's run.json, exported to HTML in-process, then opened in Debian's chromium (skipped when absent).
// Prints one line per figure, then a JSON line. Asserts nothing (aims: under 3 MB, drawn in under 1 s).
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { htmlReport } from '../src/core/report/html.js';
import { loadRunFolder } from '../src/core/report/load-run-folder.js';
import { writeSyntheticRun } from './synthetic-run.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 10_000);
const CHROMIUM = '/usr/bin/chromium';

const dir = await mkdtemp(join(tmpdir(), 'sb-bench-report-'));
try {
  await writeSyntheticRun(dir, { requests: REQUESTS });
  const t0 = performance.now();
  const folder = await loadRunFolder(dir);
  const t1 = performance.now();
  const html = htmlReport(folder);
  const t2 = performance.now();
  const file = join(dir, 'report.html');
  await writeFile(file, html);
  if (process.env.BENCH_REPORT_OUT) await writeFile(process.env.BENCH_REPORT_OUT, html); // to look at it
  const bytes = Buffer.byteLength(html);
  console.log(`requests in the run folder        ${folder.requests.length}`);
  console.log(`read + validate the run folder    ${(t1 - t0).toFixed(0)} ms`);
  console.log(`render the HTML                   ${(t2 - t1).toFixed(0)} ms`);
  console.log(`HTML size                         ${(bytes / 1e6).toFixed(2)} MB (aim < 3 MB)`);
  const figures: Record<string, number | null> = {
    requests: folder.requests.length,
    loadMs: Math.round(t1 - t0),
    renderMs: Math.round(t2 - t1),
    htmlBytes: bytes,
    chromiumLoadMs: null,
    chromiumDrawnMs: null,
  };
  if (existsSync(CHROMIUM)) {
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu'],
    });
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    // A warm-up load first: the first page of a fresh browser pays for its own start-up.
    await page.goto('data:text/html,<p>warm</p>');
    const start = performance.now();
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    const loaded = performance.now();
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    const drawn = performance.now();
    await browser.close();
    figures.chromiumLoadMs = Math.round(loaded - start);
    figures.chromiumDrawnMs = Math.round(drawn - start);
    console.log(`chromium: load event              ${figures.chromiumLoadMs} ms`);
    console.log(`chromium: first frames drawn      ${figures.chromiumDrawnMs} ms (aim < 1000 ms)`);
  } else {
    console.log(`chromium: skipped (${CHROMIUM} is absent: apt-get install chromium)`);
  }
  console.log(JSON.stringify(figures));
} finally {
  await rm(dir, { recursive: true, force: true });
}
