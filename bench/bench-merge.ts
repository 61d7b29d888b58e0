// npm run bench:merge — how long `servebench merge` takes, and how much memory, on 4 shard folders of 250,000
// requests each (a distributed run of 1,000,000 requests): 5 levels per shard, 16 token-bearing chunks per request.
// The shards are written first (not timed); then they are merged in this process, level by level from the record
// streams, as `servebench merge` does. Prints one line per figure, then a JSON line. Asserts nothing.
// BENCH_SHARDS and BENCH_REQUESTS (per shard) change the size.
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkerLevelReport } from '../src/shared/distributed.js';
import type { RequestRecord } from '../src/shared/request-record.js';
import type { RunRecord } from '../src/shared/run-record.js';
import { BenchConfigSchema } from '../src/shared/config.js';
import { createMonoClock } from '../src/core/clock.js';
import { mergeShards } from '../src/core/distributed/merge-shards.js';

const SHARDS = Number(process.env.BENCH_SHARDS ?? 4);
const PER_SHARD = Number(process.env.BENCH_REQUESTS ?? 250_000);
const LEVELS = [16, 64, 256, 512, 1024];
const ROUNDS = 3;
const OUT_TOKENS = 64;

const perLevel = Math.floor(PER_SHARD / LEVELS.length);
const config = BenchConfigSchema.parse({
  concurrency: LEVELS,
  rounds: ROUNDS,
  outputLen: [OUT_TOKENS],
  label: 'bench-merge',
});

function shardRecord(rank: number, runId: string): RunRecord {
  const levels: WorkerLevelReport[] = LEVELS.map((c, li) => {
    const plan = {
      concurrency: c,
      inputLen: 512,
      outputLen: OUT_TOKENS,
      rounds: ROUNDS,
      requestsPerRound: Math.floor((perLevel * SHARDS) / ROUNDS),
      warmup: 0,
    };
    const offset = { offsetMs: rank * 250.5, uncertaintyMs: 0.08, rttMs: 0.16, atMs: li * 100_000, pings: 32 };
    return {
      rank,
      host: `n${rank + 1}`,
      levelIndex: li,
      serverConfigIndex: 0,
      plan,
      share: { ...plan, concurrency: c / SHARDS, requestsPerRound: Math.floor(perLevel / ROUNDS) },
      requests: perLevel,
      offsetBefore: rank === 0 ? null : offset,
      offsetAfter: rank === 0 ? null : { ...offset, atMs: offset.atMs + 90_000 },
      loopLagP99Ms: 2,
      roundsCompleted: ROUNDS,
      aborted: false,
      skippedTurns: 0,
      startLateMs: 0,
      startMs: 0,
      endMs: 0,
    };
  });
  return {
    schemaVersion: 1,
    id: `${runId}-rank-${rank}`,
    label: 'bench-merge',
    startedAt: new Date().toISOString(),
    finishedAt: new Date().toISOString(),
    status: 'completed',
    simulated: true,
    config,
    environment: {
      host: { hostname: `n${rank + 1}`, os: 'linux', cpus: 8, node: process.version },
      servebenchVersion: 'bench',
      engine: { kind: 'attach', simulated: true },
    },
    clock: { originMonoNs: '0', originWall: new Date().toISOString() },
    levels: [],
    checks: [],
    distributed: {
      role: 'shard',
      worldSize: SHARDS,
      coordinator: 'n1:29517',
      launcher: 'slurm',
      workers: [{ rank, host: `n${rank + 1}` }],
      rank,
      runId,
      levels,
    },
  };
}

/** One shard's requests.jsonl: each level's requests in rounds, on the worker's own clock. */
async function writeShard(dir: string, rank: number): Promise<void> {
  const out = createWriteStream(join(dir, 'requests.jsonl'));
  let t = 1000 - rank * 250.5;
  for (const [li, c] of LEVELS.entries()) {
    const tpot = 8 + c * 0.01;
    for (let i = 0; i < perLevel; i++) {
      const id = li * perLevel * SHARDS + rank * perLevel + i;
      const send = t + (i % (c / SHARDS)) * 0.5;
      const first = send + 20 + ((id * 7919) % 100) / 10;
      const end = first + tpot * (OUT_TOKENS - 1);
      const chunks: Array<[number, number]> = [];
      for (let k = 0; k < 16; k++)
        chunks.push([Number((first + ((end - first) * k) / 15).toFixed(3)), OUT_TOKENS / 16]);
      const r: RequestRecord = {
        id,
        requestTag: `sb-bench-${id}`,
        levelIndex: li,
        round: Math.floor((i * ROUNDS) / perLevel),
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
      if (!out.write(`${JSON.stringify(r)}\n`)) await new Promise<void>((res) => out.once('drain', () => res()));
      if (i % Math.max(1, c / SHARDS) === 0) t += tpot * OUT_TOKENS * 0.02;
    }
    t += 10_000;
  }
  await new Promise<void>((res) => out.end(res));
}

const dir = await mkdtemp(join(tmpdir(), 'sb-bench-merge-'));
try {
  const runDir = join(dir, 'runs', '20260101T000000Z-bench-merge');
  for (let rank = 0; rank < SHARDS; rank++) {
    const shard = join(runDir, 'shards', `rank-${rank}`);
    await mkdir(shard, { recursive: true });
    await writeFile(join(shard, 'run.json'), JSON.stringify(shardRecord(rank, '20260101T000000Z-bench-merge')));
    await writeShard(shard, rank);
  }
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const t0 = performance.now();
  const result = await mergeShards([runDir], {
    out: join(dir, 'merged'),
    clock: createMonoClock(),
    now: () => new Date(),
  });
  const seconds = (performance.now() - t0) / 1000;
  const peakMiB = process.resourceUsage().maxRSS / 1024;
  const requests = result.record.levels.reduce((s, l) => s + l.completed, 0);
  console.log(`shards merged                     ${SHARDS}`);
  console.log(`requests merged                   ${requests}`);
  console.log(`levels                            ${result.record.levels.length}`);
  console.log(`merge time                        ${seconds.toFixed(1)} s`);
  console.log(`requests per second               ${Math.round(requests / seconds)}`);
  console.log(
    `peak RSS                          ${peakMiB.toFixed(0)} MiB (${(rssBefore / 2 ** 20).toFixed(0)} MiB before)`,
  );
  console.log(
    JSON.stringify({
      shards: SHARDS,
      requests,
      levels: result.record.levels.length,
      seconds: Number(seconds.toFixed(2)),
      peakRssMiB: Math.round(peakMiB),
    }),
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
