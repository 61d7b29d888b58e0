import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunRecord } from '../../../../src/shared/run-record.js';
import { createRng } from '../../../../src/core/rng.js';
import type { CompareBlock, CompareSeries } from '../../../../src/core/report/compare/types.js';
import { noFigures } from '../../../../src/core/report/compare/types.js';
import { figuresFromBlocks } from '../../../../src/core/report/compare/statistics.js';
import { fixtureCopy } from '../fixtures.js';

export const compareFixtures = new URL('../../../fixtures/compare/', import.meta.url).pathname;

/** A level of synthetic requests: log-normal latencies around the given medians, `scale` times slower. */
export function syntheticBlocks(seed: number, rounds: number, perRound: number, scale = 1): CompareBlock[] {
  const rng = createRng(seed);
  const normal = (): number => Math.sqrt(-2 * Math.log(1 - rng())) * Math.cos(2 * Math.PI * rng());
  const blocks: CompareBlock[] = [];
  for (let r = 0; r < rounds; r++) {
    const requests = [];
    let busy = 0;
    for (let i = 0; i < perRound; i++) {
      const ttft = 40 * Math.exp(0.25 * normal()) * scale;
      const tpot = 10 * Math.exp(0.1 * normal()) * scale;
      const e2e = ttft + tpot * 127;
      busy += e2e;
      requests.push({ ttftMs: ttft, tpotMs: tpot, e2eMs: e2e, outTokens: 128 });
    }
    // Four requests in flight: the round lasts a quarter of their summed latencies.
    blocks.push({ windowMs: busy / 4, requests });
  }
  return blocks;
}

/** A series of one closed-loop level at concurrency 4 from blocks. */
export function syntheticSeries(label: string, blocks: CompareBlock[]): CompareSeries {
  return {
    label,
    source: 'servebench',
    path: label,
    conditions: { measuredBy: 'servebench 0.1.0', engine: 'vllm 0.11.0', model: 'm', inputLen: 512, outputLen: 128 },
    levels: [
      { load: { kind: 'concurrency', value: 4 }, figures: { ...noFigures(), ...figuresFromBlocks(blocks) }, blocks },
    ],
    notes: [],
  };
}

/**
 * A copy of the closed fixture whose every request took `scale` times as long (and each round's window with it),
 * with run.json changed by `edit`.
 */
export async function slowedCopy(scale: number, edit: (record: RunRecord) => void): Promise<string> {
  const dir = await fixtureCopy('closed');
  const lines = (await readFile(join(dir, 'requests.jsonl'), 'utf8')).split('\n').filter(Boolean);
  const out = lines.map((line) => {
    const r = JSON.parse(line);
    const t = (v: number | null): number | null => (v === null ? null : r.sendMs + (v - r.sendMs) * scale);
    r.firstTokenMs = t(r.firstTokenMs);
    r.endMs = t(r.endMs);
    r.chunks = r.chunks.map(([at, n]: [number, number]) => [t(at), n]);
    return JSON.stringify(r);
  });
  await writeFile(join(dir, 'requests.jsonl'), out.join('\n') + '\n');
  const record = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8')) as RunRecord;
  for (const level of record.levels) for (const round of level.rounds) round.windowMs *= scale;
  edit(record);
  await writeFile(join(dir, 'run.json'), JSON.stringify(record, null, 2));
  return dir;
}
