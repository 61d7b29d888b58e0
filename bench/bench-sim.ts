// npm run bench:sim — how many SSE chunk events per second the simulator serves in zero-delay mode
// ('instant' profile), so that it is never the bottleneck of a client benchmark. The sim runs as
// its own process (as `servebench run` starts it); a minimal raw node:http client counts `data:`
// events at several concurrencies. Prints one line per level, then a JSON line.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';

const LEVELS = [1, 16, 64, 256];
const SECONDS_PER_LEVEL = Number(process.env.BENCH_SECONDS ?? 3);
const MAX_TOKENS = 1024;

const cli = fileURLToPath(new URL('./cli.js', import.meta.url));
const DATA = Buffer.from('data:');

/** CPU seconds the sim process has used (Linux /proc; null elsewhere): events per sim CPU-second do not depend on other load. */
function cpuSeconds(pid: number | undefined): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in USER_HZ (100/s)
  } catch {
    return null;
  }
}

async function startSim(): Promise<{ url: string; pid: number | undefined; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [cli, 'sim', '--port', '0', '--profile', 'instant'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (b: Buffer) => {
      buf += b.toString();
      const m = /Uvicorn running on (http:\/\/[\d.]+:\d+)/.exec(buf);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`sim exited (${code}) before it was ready; run npm run build:cli`)));
  });
  child.stdout.resume();
  return {
    url,
    pid: child.pid,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** One streamed request; resolves with the number of `data:` events (incl. [DONE]). */
function oneRequest(url: URL, agent: Agent, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let events = 0;
        let tail: Buffer | null = null;
        res.on('data', (chunk: Buffer) => {
          // An event marker may straddle two reads: keep the last 4 bytes.
          const buf: Buffer = tail ? Buffer.concat([tail, chunk]) : chunk;
          let i = buf.indexOf(DATA);
          while (i >= 0) {
            events++;
            i = buf.indexOf(DATA, i + DATA.length);
          }
          tail = buf.subarray(Math.max(0, buf.length - (DATA.length - 1)));
        });
        res.on('end', () => resolve(events));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

interface LevelResult {
  concurrency: number;
  eventsPerSec: number;
  eventsPerSimCpuSec: number | null;
  requests: number;
}

async function level(base: string, pid: number | undefined, concurrency: number): Promise<LevelResult> {
  const url = new URL('/v1/chat/completions', base);
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const body = JSON.stringify({
    messages: [{ role: 'user', content: 'Write a long story about benchmarks.' }],
    max_tokens: MAX_TOKENS,
    ignore_eos: true,
    stream: true,
    stream_options: { include_usage: true, continuous_usage_stats: true },
  });
  // Warm-up: JIT and connections.
  await Promise.all(Array.from({ length: concurrency }, () => oneRequest(url, agent, body)));
  let events = 0;
  let requests = 0;
  const cpu0 = cpuSeconds(pid);
  const t0 = process.hrtime.bigint();
  const deadline = t0 + BigInt(SECONDS_PER_LEVEL * 1e9);
  const worker = async (): Promise<void> => {
    while (process.hrtime.bigint() < deadline) {
      const n = await oneRequest(url, agent, body);
      events += n;
      requests++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu1 = cpuSeconds(pid);
  agent.destroy();
  const cpu = cpu0 !== null && cpu1 !== null ? cpu1 - cpu0 : null;
  return {
    concurrency,
    eventsPerSec: Math.round(events / secs),
    eventsPerSimCpuSec: cpu ? Math.round(events / cpu) : null,
    requests,
  };
}

const sim = await startSim();
const results: LevelResult[] = [];
try {
  console.log(
    `bench:sim — instant profile, chat stream with continuous usage, ${MAX_TOKENS} tokens per request, ${SECONDS_PER_LEVEL} s per level`,
  );
  for (const c of LEVELS) {
    const r = await level(sim.url, sim.pid, c);
    results.push(r);
    const perCpu =
      r.eventsPerSimCpuSec === null ? '' : `, ${r.eventsPerSimCpuSec.toLocaleString('en-US')} per sim CPU-second`;
    console.log(
      `concurrency ${String(c).padStart(3)}: ${r.eventsPerSec.toLocaleString('en-US')} chunk events/s${perCpu} (${r.requests} requests)`,
    );
  }
} finally {
  await sim.stop();
}
const best = results.reduce((a, r) => (r.eventsPerSec > a.eventsPerSec ? r : a));
console.log(
  JSON.stringify({
    chunkEventsPerSec: best.eventsPerSec,
    atConcurrency: best.concurrency,
    chunkEventsPerSimCpuSec: best.eventsPerSimCpuSec,
    byConcurrency: Object.fromEntries(results.map((r) => [r.concurrency, r.eventsPerSec])),
  }),
);
