// npm run bench:compare — how fast `servebench compare` is on two runs of 10,000 requests each: two synthetic run
// folders (the second 10 % slower) are read, compared (block bootstrap, 2,000 replicates per level) and rendered
// to HTML and Markdown in-process. Prints one line per figure, then a JSON line. Asserts nothing.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compareSeries } from '../src/core/report/compare/compare.js';
import { compareHtml } from '../src/core/report/compare/html.js';
import { compareMarkdown } from '../src/core/report/compare/markdown.js';
import { readCompareInputs } from '../src/core/report/compare/read-input.js';
import { BOOTSTRAP_REPLICATES } from '../src/core/report/compare/statistics.js';
import { writeSyntheticRun } from './synthetic-run.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 10_000);

const root = await mkdtemp(join(tmpdir(), 'sb-bench-compare-'));
try {
  const a = join(root, 'baseline');
  const b = join(root, 'slower');
  await mkdir(a);
  await mkdir(b);
  const na = await writeSyntheticRun(a, { requests: REQUESTS, label: 'baseline' });
  const nb = await writeSyntheticRun(b, { requests: REQUESTS, label: 'slower', slowdown: 1.1 });
  const t0 = performance.now();
  const series = await readCompareInputs([a, b]);
  const t1 = performance.now();
  const comparison = compareSeries(series);
  const t2 = performance.now();
  const html = compareHtml(comparison, new Date(0));
  const t3 = performance.now();
  const md = compareMarkdown(comparison);
  const t4 = performance.now();
  const intervals = comparison.levels.reduce((n, l) => n + l.figures.filter((f) => f.interval).length, 0);
  const verdicts: Record<string, number> = {};
  for (const l of comparison.levels) for (const f of l.figures) verdicts[f.verdict] = (verdicts[f.verdict] ?? 0) + 1;
  const figures = {
    requests: [na, nb],
    levels: comparison.levels.length,
    replicates: BOOTSTRAP_REPLICATES,
    intervals,
    readMs: Math.round(t1 - t0),
    bootstrapMs: Math.round(t2 - t1),
    htmlMs: Math.round(t3 - t2),
    markdownMs: Math.round(t4 - t3),
    htmlBytes: Buffer.byteLength(html),
    markdownBytes: Buffer.byteLength(md),
    verdicts,
  };
  console.log(`requests per run                  ${na} / ${nb}`);
  console.log(
    `levels compared / intervals       ${figures.levels} / ${intervals} (${BOOTSTRAP_REPLICATES} replicates)`,
  );
  console.log(`verdicts (the second run is 10 % slower) ${JSON.stringify(verdicts)}`);
  console.log(`read + validate both run folders  ${figures.readMs} ms`);
  console.log(`bootstrap statistics              ${figures.bootstrapMs} ms`);
  console.log(`render the HTML                   ${figures.htmlMs} ms`);
  console.log(`render the Markdown               ${figures.markdownMs} ms`);
  console.log(`HTML size                         ${(figures.htmlBytes / 1e3).toFixed(0)} kB`);
  console.log(JSON.stringify(figures));
} finally {
  await rm(root, { recursive: true, force: true });
}
