// npm run bench:runs-list — how long listing a runs folder of 10,000 runs takes: the first listing (every
// run.json read and validated, the index written), the next one (the index answers; each run.json is only
// stat'ed), and one after 10 runs changed. Run folders are copies of the closed-loop fixture's run.json.
// Then how the app opens a run of 100,000 requests (bench/synthetic-run.ts): getRun, then getRequestChart
// (thinned on the core), each timed and sized as the answer crosses the wire (JSON).
// Prints one line per figure, then a JSON line. Asserts nothing (aim: a listing after the first under 1 s).
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createServebenchService } from '../src/core/api.js';
import { listRuns, RUNS_INDEX_FILE } from '../src/core/run-folder/list-runs.js';
import { writeSyntheticRun } from '../bench/synthetic-run.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 10_000);
const BIG_RUN_REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100_000);
const CHANGED = 10;
const fixture = resolve(import.meta.dirname, '..', 'test', 'fixtures', 'runs', 'closed', 'run.json');

const name = (i: number): string => {
  const t = new Date(Date.UTC(2026, 0, 1) + i * 60_000)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${t}-run${i}`;
};

/** One listing: as the app's service lists (the index it wrote kept in memory), or as a fresh process does. */
const timed = async (fresh = false): Promise<{ ms: number; runs: number }> => {
  const t0 = performance.now();
  const runs = (fresh ? await listRuns(out) : await service.listRuns()).length;
  return { ms: performance.now() - t0, runs };
};

/** Nothing is run here: only run folders are read. */
const noServer = async (): Promise<never> => {
  throw new Error('no server: this reads run folders only');
};

/** Opens a synthetic run of BIG_RUN_REQUESTS requests as the app does: the record, then the thinned chart. */
interface BigRunFigures {
  requestsBytes: number;
  runMs: number;
  runBytes: number;
  chartMs: number;
  chartBytes: number;
}

async function openBigRun(): Promise<BigRunFigures> {
  const parent = join(out, 'big');
  await mkdir(join(parent, 'big-run'), { recursive: true });
  await writeSyntheticRun(join(parent, 'big-run'), { requests: BIG_RUN_REQUESTS });
  const app = createServebenchService({ outDir: parent, deps: { startServer: noServer } });
  const t0 = performance.now();
  const runBytes = Buffer.byteLength(JSON.stringify(await app.getRun('big-run')));
  const t1 = performance.now();
  const chartBytes = Buffer.byteLength(JSON.stringify(await app.getRequestChart('big-run')));
  const t2 = performance.now();
  const requestsBytes = (await stat(join(parent, 'big-run', 'requests.jsonl'))).size;
  await rm(parent, { recursive: true, force: true });
  return { requestsBytes, runMs: t1 - t0, runBytes, chartMs: t2 - t1, chartBytes };
}

const out = await mkdtemp(join(tmpdir(), 'sb-bench-runs-list-'));
const service = createServebenchService({ outDir: out, deps: { startServer: noServer } });
try {
  const record = JSON.parse(await readFile(fixture, 'utf8')) as Record<string, unknown>;
  for (let i = 0; i < RUNS; i++) {
    await mkdir(join(out, name(i)));
    await writeFile(
      join(out, name(i), 'run.json'),
      JSON.stringify({ ...record, id: name(i), label: `run ${i}` }, null, 2),
    );
  }
  const first = await timed();
  const second = await timed();
  const third = await timed();
  const freshProcess = await timed(true);
  for (let i = 0; i < CHANGED; i++) {
    const file = join(out, name(i * 7), 'run.json');
    const r = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    await writeFile(file, JSON.stringify({ ...r, label: `renamed ${i}` }, null, 2));
  }
  const changed = await timed();
  const indexBytes = (await stat(join(out, RUNS_INDEX_FILE))).size;
  console.log(`runs in the folder                      ${first.runs}`);
  console.log(`first listing (every run.json read)     ${first.ms.toFixed(0)} ms`);
  console.log(`second listing (the index answers)      ${second.ms.toFixed(0)} ms (aim < 1000 ms)`);
  console.log(`third listing                           ${third.ms.toFixed(0)} ms`);
  console.log(`a fresh process's listing (reads index) ${freshProcess.ms.toFixed(0)} ms`);
  console.log(`listing after ${CHANGED} runs changed           ${changed.ms.toFixed(0)} ms`);
  console.log(`index size                              ${(indexBytes / 1e6).toFixed(2)} MB`);
  const big = await openBigRun();
  console.log(
    `big run: requests.jsonl                 ${(big.requestsBytes / 1e6).toFixed(1)} MB, ${BIG_RUN_REQUESTS} requests`,
  );
  console.log(
    `big run: getRun                         ${big.runMs.toFixed(0)} ms, ${(big.runBytes / 1e6).toFixed(2)} MB`,
  );
  console.log(
    `big run: getRequestChart                ${big.chartMs.toFixed(0)} ms, ${(big.chartBytes / 1e6).toFixed(2)} MB`,
  );
  const round = (ms: number): number => Math.round(ms);
  console.log(
    JSON.stringify({
      runs: first.runs,
      firstMs: round(first.ms),
      secondMs: round(second.ms),
      thirdMs: round(third.ms),
      freshProcessMs: round(freshProcess.ms),
      changedMs: round(changed.ms),
      indexBytes,
      bigRunRequests: BIG_RUN_REQUESTS,
      bigRunRequestsBytes: big.requestsBytes,
      getRunMs: round(big.runMs),
      getRunBytes: big.runBytes,
      getRequestChartMs: round(big.chartMs),
      getRequestChartBytes: big.chartBytes,
    }),
  );
} finally {
  await rm(out, { recursive: true, force: true });
}
