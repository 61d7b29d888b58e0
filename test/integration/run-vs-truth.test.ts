import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { percentile } from '../../src/core/metrics/index.js';
import type { RequestRecord } from '../../src/shared/request-record.js';
import type { RunRecord } from '../../src/shared/run-record.js';

const cli = new URL('../../bin/servebench.js', import.meta.url).pathname;

interface Truth {
  requestId: string | null;
  receivedNs: string;
  firstTokenNs: string | null;
  completionTokens: number;
}

describe('servebench run against the simulator, checked against its truth log', () => {
  let out: string;
  let record: RunRecord;
  let requests: RequestRecord[];
  let truth: Map<string, Truth>;
  let exitCode: number | null;

  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), 'sb-truth-'));
    const truthFile = join(out, 'truth.jsonl');
    const res = spawnSync(
      process.execPath,
      [
        cli,
        'run',
        '--concurrency',
        '1,16,64',
        '--input-len',
        '64',
        '--output-len',
        '32',
        '--rounds',
        '2',
        '--requests-per-round',
        '64',
        '--out',
        out,
        '--label',
        'truth',
        `--server-arg=--truth=${truthFile}`,
      ],
      { encoding: 'utf8', timeout: 240_000 },
    );
    exitCode = res.status;
    if (res.status !== 0) console.error(res.stdout, res.stderr);
    const dir = join(out, (await readdir(out)).find((d) => d.endsWith('-truth')) as string);
    record = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8')) as RunRecord;
    requests = (await readFile(join(dir, 'requests.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as RequestRecord);
    truth = new Map();
    for (const line of (await readFile(truthFile, 'utf8')).trim().split('\n')) {
      const t = JSON.parse(line) as Truth;
      if (t.requestId) truth.set(t.requestId, t);
    }
  });
  afterAll(async () => {
    await rm(out, { recursive: true, force: true });
  });

  it('completes with exit 0, every level measured, simulated said plainly', () => {
    expect(exitCode).toBe(0);
    expect(record.status).toBe('completed');
    expect(record.simulated).toBe(true);
    expect(record.levels.map((l) => l.concurrency)).toEqual([1, 16, 64]);
  });

  it('passes the output-length and input-length checks at every level', () => {
    for (const level of record.levels) {
      expect(level.checks.find((c) => c.id === 'output-length')?.status).toBe('pass');
      expect(level.checks.find((c) => c.id === 'input-length')?.status).toBe('pass');
      expect(level.failed).toBe(0);
    }
  });

  it('matches every measured request to the truth log, never sees a token before the server wrote it, and TTFT is within 2 ms at p99', () => {
    const origin = BigInt(record.clock.originMonoNs);
    const errors: number[] = [];
    for (const r of requests.filter((q) => !q.warmup)) {
      const t = truth.get(r.requestTag);
      expect(t, r.requestTag).toBeDefined();
      expect(t!.completionTokens).toBe(r.nOut);
      const truthFirstMs = Number(BigInt(t!.firstTokenNs!) - origin) / 1e6;
      const truthReceivedMs = Number(BigInt(t!.receivedNs) - origin) / 1e6;
      // Causality on one monotonic clock: sent before the server got it; first token read after it was written.
      expect(r.sendMs).toBeLessThanOrEqual(truthReceivedMs);
      expect(r.firstTokenMs!).toBeGreaterThanOrEqual(truthFirstMs);
      errors.push(r.firstTokenMs! - truthFirstMs);
    }
    const p99 = percentile(
      errors.sort((a, b) => a - b),
      99,
    );
    expect(p99).toBeLessThan(2);
  });
});
