import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/shared/run-record.js';
import { turnTableRows } from '../../src/shared/turn-table.js';

describe('turn table rows (app, HTML and Markdown reports)', () => {
  it('names each level by load and lengths, and by its server settings in a server sweep (rows never collide)', async () => {
    const path = join(__dirname, '..', 'fixtures', 'runs', 'closed', 'run.json');
    const record = JSON.parse(await readFile(path, 'utf8')) as RunRecord;
    const level = record.levels[0]!;
    const byTurn = [{ turn: 0, inputTokens: 40, ttftMs: { ...level.ttftMs, n: 4, p50: 10, p95: 11, p99: 12 } }];
    const at = (index: number, maxNumSeqs: number) => ({
      ...level,
      concurrency: 4,
      inputLen: 128,
      outputLen: 32,
      serverConfigIndex: index,
      serverVariant: { 'server.maxNumSeqs': maxNumSeqs },
      byTurn,
    });
    const sweep: RunRecord = { ...record, levels: [at(0, 8), at(1, 64)] };
    expect(turnTableRows(sweep).map((r) => r[0])).toEqual(['c=4 128/32 maxNumSeqs=8', 'c=4 128/32 maxNumSeqs=64']);
    const single: RunRecord = { ...record, levels: [{ ...level, rate: 2.5, inputLen: 64, outputLen: 16, byTurn }] };
    expect(turnTableRows(single)).toEqual([['2.5 req/s 64/16', '1', '4', '40', '10', '11', '12']]);
  });
});
