// npm run bench:memory — peak memory of `servebench run` against the run's length. Runs the CLI against the
// built-in simulator at zero delay ('instant' profile) for BENCH_MEMORY_REQUESTS requests each (default
// 1000,10000,100000; add 1000000 when there are minutes to spare), one closed-loop level, and reads the process's
// own peak RSS (getrusage maxrss, written as it exits). Prints one line per length, then a JSON line. Asserts nothing.
// Every request sends the same prompt (--no-unique-prefix): counting 100,000 unique prompts with the simulator's
// /tokenize would take most of the bench's time; test/core/load/prompt-texts.test.ts pins that they hold no text.
import { spawn } from 'node:child_process';
import { createReadStream, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const LENGTHS = (process.env.BENCH_MEMORY_REQUESTS ?? '1000,10000,100000').split(',').map(Number);
const OUTPUT_LEN = Number(process.env.BENCH_MEMORY_OUTPUT_LEN ?? 64);
const CONCURRENCY = Number(process.env.BENCH_MEMORY_CONCURRENCY ?? 64);
/** The most requests one round takes (--requests-per-round's bound): longer runs take several rounds. */
const ROUND_MAX = 100_000;

const cli = fileURLToPath(new URL('./cli.js', import.meta.url));

interface Figure {
  requests: number;
  outputLen: number;
  peakRssMiB: number;
  seconds: number;
  requestsLines: number;
}

/** One `servebench run` of `requests` requests; its peak RSS from the exit hook in `hook`. */
async function measure(requests: number, dir: string, hook: string): Promise<Figure> {
  const rounds = Math.ceil(requests / ROUND_MAX);
  const perRound = Math.ceil(requests / rounds);
  const out = join(dir, `n${requests}`);
  const rssFile = join(dir, `rss-${requests}`);
  const args = [
    ...['--import', hook, cli, 'run', '--engine', 'sim', '--sim-profile', 'instant'],
    ...['--concurrency', String(CONCURRENCY), '--rounds', String(rounds), '--requests-per-round', String(perRound)],
    ...['--input-len', '32', '--output-len', String(OUTPUT_LEN), '--no-warmup', '--no-unique-prefix'],
    ...['--out', out, '--label', 'memory'],
  ];
  const started = process.hrtime.bigint();
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, args, {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, SB_BENCH_RSS_FILE: rssFile },
    });
    child.once('exit', resolve);
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (code !== 0 && code !== 1) throw new Error(`servebench run exited with ${code} at ${requests} requests`);
  const peakKiB = Number(readFileSync(rssFile, 'utf8'));
  const runDir = join(out, readdirOne(out));
  const lines = await countLines(join(runDir, 'requests.jsonl'));
  rmSync(out, { recursive: true, force: true });
  return {
    requests: rounds * perRound,
    outputLen: OUTPUT_LEN,
    peakRssMiB: peakKiB / 1024,
    seconds,
    requestsLines: lines,
  };
}

/** Lines of a file, read as a stream: a million requests' file is longer than one string may be. */
async function countLines(file: string): Promise<number> {
  let lines = 0;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
  }
  return lines;
}

/** The one run folder a measured run made under `dir`. */
function readdirOne(dir: string): string {
  return readdirSync(dir)[0] as string;
}

const dir = mkdtempSync(join(tmpdir(), 'sb-bench-memory-'));
const hook = join(dir, 'peak-rss.mjs');
// maxRSS is the kernel's own high-water mark of the process (KiB): nothing is missed between samples.
writeFileSync(
  hook,
  "import { writeFileSync } from 'node:fs';\nprocess.on('exit', () => writeFileSync(process.env.SB_BENCH_RSS_FILE, String(process.resourceUsage().maxRSS)));\n",
);
const figures: Figure[] = [];
try {
  for (const n of LENGTHS) {
    const f = await measure(n, dir, hook);
    figures.push(f);
    console.log(
      `${f.requests.toLocaleString('en-US').padStart(9)} requests of ${f.outputLen} tokens: peak RSS ${f.peakRssMiB.toFixed(0)} MiB ` +
        `(${f.seconds.toFixed(0)} s, ${f.requestsLines.toLocaleString('en-US')} lines in requests.jsonl)`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(JSON.stringify({ bench: 'memory', concurrency: CONCURRENCY, simulated: true, figures }));
