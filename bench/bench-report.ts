// npm run bench:report — how big the HTML report of a 10,000-request run is and how fast it is made and drawn:
// a synthetic run folder (5 levels x 2,000 requests, GPU sampled every 500 ms) is written from the closed-loop
// fixture's run.json, exported to HTML in-process, then opened in Debian's chromium (skipped when absent).
// Prints one line per figure, then a JSON line. Asserts nothing (aims: under 3 MB, drawn in under 1 s).
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import type { RequestRecord } from '../src/shared/request-record.js';
import type { LevelResult, RunRecord } from '../src/shared/run-record.js';
import { packageRoot } from '../src/core/package-root.js';
import { htmlReport } from '../src/core/report/html.js';
import { loadRunFolder } from '../src/core/report/load-run-folder.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 10_000);
const LEVELS = [1, 4, 16, 64, 256];
const OUT_TOKENS = 256;
const CHROMIUM = '/usr/bin/chromium';

/** A run folder with REQUESTS measured requests spread over LEVELS, shaped like a real sweep. */
async function writeSyntheticRun(dir: string): Promise<void> {
  const template = JSON.parse(
    await readFile(join(packageRoot(), 'test', 'fixtures', 'runs', 'closed', 'run.json'), 'utf8'),
  ) as RunRecord;
  const base = template.levels[0] as LevelResult;
  const perLevel = Math.floor(REQUESTS / LEVELS.length);
  const requests: string[] = [];
  const levels: LevelResult[] = [];
  let t = 1000;
  let id = 0;
  LEVELS.forEach((c, li) => {
    const start = t;
    const tpot = 8 + c * 0.05;
    const ttft = 20 + c * 0.8;
    const slots = new Array<number>(c).fill(start);
    for (let i = 0; i < perLevel; i++) {
      const slot = i % c;
      const send = slots[slot] as number;
      const first = send + ttft * (0.8 + ((i * 7919) % 100) / 250);
      const end = first + tpot * (OUT_TOKENS - 1);
      const chunks: Array<[number, number]> = [];
      for (let k = 0; k < 16; k++) chunks.push([Number((first + ((end - first) * k) / 15).toFixed(3)), 16]);
      const r: RequestRecord = {
        id: id++,
        requestTag: `bench-${id}`,
        levelIndex: li,
        round: i % 3,
        warmup: false,
        sendMs: send,
        firstTokenMs: first,
        endMs: end,
        chunks,
        nOut: OUT_TOKENS,
        nOutSource: 'server',
        chunkTokensSource: 'server',
        clientChunkCount: 16,
        nIn: 512,
        expectedIn: 512,
        expectedOut: OUT_TOKENS,
        finishReason: 'length',
        ok: true,
        malformedLines: 0,
      };
      requests.push(JSON.stringify(r));
      slots[slot] = end + 0.5;
    }
    t = Math.max(...slots) + 200;
    const tok = (c * OUT_TOKENS * 1000) / (ttft + tpot * (OUT_TOKENS - 1));
    const summary = (v: number) => ({
      ...base.ttftMs,
      n: perLevel,
      mean: v,
      p50: v,
      p90: v * 1.1,
      p95: v * 1.2,
      p99: v * 1.3,
      p95Ci: [v * 1.15, v * 1.25] as [number, number],
      p99Ci: null,
    });
    levels.push({
      ...base,
      concurrency: c,
      startMs: start,
      endMs: t,
      completed: perLevel,
      outputTokPerSec: tok,
      totalTokPerSec: tok * 3,
      ttftMs: summary(ttft),
      tpotMs: summary(tpot),
      e2eMs: summary(ttft + tpot * (OUT_TOKENS - 1)),
      rounds: [0, 1, 2].map((round) => ({
        ...(base.rounds[0] as LevelResult['rounds'][number]),
        round,
        outputTokPerSec: tok * (0.97 + round * 0.03),
      })),
    });
  });
  const gpu: string[] = [];
  for (let s = 0; s < t; s += 500) {
    const hot = s > t * 0.6;
    gpu.push(
      JSON.stringify({
        kind: 'gpu',
        serverConfigIndex: 0,
        tMs: s,
        gpu: 0,
        smClockMhz: hot ? 1500 : 1980,
        maxSmClockMhz: 1980,
        memClockMhz: 3201,
        tempC: 40 + (45 * s) / t,
        memTempC: 50,
        powerW: 600,
        powerLimitW: 700,
        utilPct: 100,
        memUsedMiB: 120000,
        memTotalMiB: 143771,
        pstate: 'P0',
        throttleMask: hot ? 0x20 : 0,
        class: hot ? 'thermal' : 'full-speed',
      }),
    );
  }
  const record: RunRecord = {
    ...template,
    id: 'bench-report',
    label: 'bench-report',
    levels,
    config: { ...template.config, concurrency: LEVELS },
  };
  await writeFile(join(dir, 'run.json'), JSON.stringify(record));
  await writeFile(join(dir, 'requests.jsonl'), requests.join('\n') + '\n');
  await writeFile(join(dir, 'telemetry.jsonl'), gpu.join('\n') + '\n');
}

const dir = await mkdtemp(join(tmpdir(), 'sb-bench-report-'));
try {
  await writeSyntheticRun(dir);
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
