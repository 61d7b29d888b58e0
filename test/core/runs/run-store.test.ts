import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunWriter, createRunDir, runTimestamp, safeLabel } from '../../../src/core/runs/run-store.js';

let out: string;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'sb-store-'));
});
afterEach(async () => {
  await rm(out, { recursive: true, force: true });
});

describe('run store', () => {
  it('names run folders <UTC timestamp>-<label> and never reuses one', async () => {
    const at = new Date('2026-11-30T09:48:00.123Z');
    expect(runTimestamp(at)).toBe('20261130T094800Z');
    expect(safeLabel('my model / fp8')).toBe('my-model-fp8');
    const a = await createRunDir(out, 'x', at);
    const b = await createRunDir(out, 'x', at);
    expect(a.endsWith('20261130T094800Z-x')).toBe(true);
    expect(b.endsWith('20261130T094800Z-x-2')).toBe(true);
  });

  it('after a failed write, still writes summary.csv and run.json (to record why) and names the failure', async () => {
    const dir = await createRunDir(out, 'w', new Date());
    const writer = new RunWriter(dir);
    void writer.appendLines('missing-folder/x.jsonl', ['a']);
    await writer.writeText('summary.csv', 'ok\n');
    await writer.flush();
    expect(writer.errors).toHaveLength(1);
    expect(await readFile(join(dir, 'summary.csv'), 'utf8')).toBe('ok\n');
  });
});
