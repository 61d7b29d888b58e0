// A synthetic run folder shaped like a real closed-loop sweep, for the benches (bench:report, bench:compare, bench:charts).
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RequestRecord } from '../src/shared/request-record.js';
import type { LevelResult, RunRecord } from '../src/shared/run-record.js';
import { packageRoot } from '../src/core/package-root.js';

/** What to write: how many measured requests over which concurrency levels, how slow, under which label. */
export interface SyntheticRunOptions {
  requests: number;
  levels?: readonly number[];
  outTokens?: number;
  /** Multiplies every latency (2 = a server twice as slow). */
  slowdown?: number;
  label?: string;
  /** GPU sample period (ms). */
  gpuEveryMs?: number;
}

/** Writes run.json, requests.jsonl and telemetry.jsonl of a synthetic run into dir; returns the requests written. */
export async function writeSyntheticRun(dir: string, options: SyntheticRunOptions): Promise<number> {
  const REQUESTS = options.requests;
  const LEVELS = options.levels ?? [1, 4, 16, 64, 256];
  const OUT_TOKENS = options.outTokens ?? 256;
  const slow = options.slowdown ?? 1;
  const label = options.label ?? 'bench-report';
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
    const tpot = (8 + c * 0.05) * slow;
    const ttft = (20 + c * 0.8) * slow;
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
        // Three interleaved rounds share the level's time: each window a third of it.
        windowMs: (t - start) / 3,
        outputTokPerSec: tok * (0.97 + round * 0.03),
      })),
    });
  });
  const gpu: string[] = [];
  for (let s = 0; s < t; s += options.gpuEveryMs ?? 500) {
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
    id: label,
    label,
    levels,
    config: { ...template.config, concurrency: [...LEVELS] },
  };
  await writeFile(join(dir, 'run.json'), JSON.stringify(record));
  await writeFile(join(dir, 'requests.jsonl'), requests.join('\n') + '\n');
  await writeFile(join(dir, 'telemetry.jsonl'), gpu.join('\n') + '\n');
  return requests.length;
}
