// npm run bench:viewers — does `servebench ui` with viewers that never read change a run's figures? Runs the same
// closed-loop level against the simulator ('instant' profile: the client is the bottleneck, so any time the event
// fan-out takes from the measuring loop shows) with 0 viewers and with 400 WebSocket viewers that completed the
// upgrade and then never read a byte, alternating, after one warm-up run. Prints output tok/s per run, the medians
// and their ratio, then a JSON line.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServebenchService } from '../src/core/api.js';
import { defaultBenchmarkDeps } from '../src/core/default-deps.js';
import { startUiServer } from '../src/core/ui-server/index.js';
import { startSimProcess } from './sim-process.js';

const VIEWERS = Number(process.env.BENCH_VIEWERS ?? 400);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 3000);
const PAIRS = Number(process.env.BENCH_PAIRS ?? 3);

async function stalledViewer(port: number, token: string): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(
    `GET /rpc?token=${token} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${Buffer.from('0123456789abcdef').toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  await new Promise<void>((resolve) => socket.once('data', () => resolve()));
  socket.pause();
  return socket;
}

async function main(): Promise<void> {
  const sim = await startSimProcess(['--profile', 'instant']);
  const out = await mkdtemp(join(tmpdir(), 'sb-bench-viewers-'));
  await writeFile(join(out, 'index.html'), '');
  const service = createServebenchService({ outDir: join(out, 'runs'), deps: defaultBenchmarkDeps() });
  const ui = await startUiServer({ service, port: 0, staticDir: out, onError: () => undefined });
  const rates: Record<'without' | 'with', number[]> = { without: [], with: [] };
  const measure = async (viewers: number): Promise<number | null> => {
    const sockets: Socket[] = [];
    for (let i = 0; i < viewers; i++) sockets.push(await stalledViewer(ui.port, ui.token));
    const run = await service.startRun({
      label: `viewers-${viewers}`,
      concurrency: [CONCURRENCY],
      inputLen: [32],
      outputLen: [64],
      rounds: 3,
      requestsPerRound: Math.ceil(REQUESTS / 3),
      warmup: CONCURRENCY * 2,
      server: { engine: 'attach', url: sim.url },
    });
    await service.idle();
    for (const s of sockets) s.destroy();
    return (await service.getRun(run.runId)).levels[0]?.outputTokPerSec ?? null;
  };
  const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? 0;
  try {
    // The first run warms the JIT and the simulator: not counted.
    await measure(0);
    for (let pair = 0; pair < PAIRS; pair++) {
      for (const viewers of [0, VIEWERS]) {
        const rate = await measure(viewers);
        if (rate !== null) rates[viewers === 0 ? 'without' : 'with'].push(rate);
        console.log(
          `${String(viewers).padStart(4)} stalled viewers: ${rate === null ? 'no figure' : `${rate.toFixed(0)} output tok/s`}`,
        );
      }
    }
    const without = median(rates.without);
    const withViewers = median(rates.with);
    console.log(
      `median output tok/s (c=${CONCURRENCY}, ${REQUESTS} requests, ${PAIRS} pairs): ${without.toFixed(0)} without viewers, ${withViewers.toFixed(0)} with ${VIEWERS} stalled ones; ratio ${without > 0 ? (withViewers / without).toFixed(3) : 'n/a'}`,
    );
    console.log(JSON.stringify({ viewers: VIEWERS, concurrency: CONCURRENCY, requests: REQUESTS, ...rates }));
  } finally {
    await ui.close();
    await sim.stop();
    await rm(out, { recursive: true, force: true });
  }
}

await main();
