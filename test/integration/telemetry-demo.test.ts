import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/shared/run-record.js';

const cli = new URL('../../bin/servebench.js', import.meta.url).pathname;

interface Outcome {
  status: number | null;
  record: RunRecord;
  samples: Array<{ kind: string; tMs: number; class?: string }>;
}

async function demo(out: string, profile: string): Promise<Outcome> {
  const res = spawnSync(
    process.execPath,
    [
      cli,
      'run',
      '--sim-profile',
      profile,
      '--concurrency',
      '8',
      '--input-len',
      '64',
      '--output-len',
      '64',
      '--rounds',
      '2',
      '--requests-per-round',
      '24',
      '--telemetry-interval',
      '200',
      '--out',
      out,
      '--label',
      profile,
    ],
    { encoding: 'utf8', timeout: 180_000 },
  );
  const dir = join(out, (await readdir(out)).find((d) => d.endsWith(`-${profile}`)) as string);
  const record = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8')) as RunRecord;
  const samples = (await readFile(join(dir, 'telemetry.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Outcome['samples'][number]);
  return { status: res.status, record, samples };
}

const throttling = (r: RunRecord) => r.levels[0]?.checks.find((c) => c.id === 'throttling');

describe('demo mode: the simulator fake GPU read through the fake nvidia-smi', () => {
  let out: string;
  const runs: Record<string, Outcome> = {};
  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), 'sb-telemetry-'));
    for (const profile of ['h200-llama8b-bf16', 'thermal-throttle-demo', 'power-capped'])
      runs[profile] = await demo(out, profile);
  }, 600_000);
  afterAll(async () => {
    await rm(out, { recursive: true, force: true });
  });

  it('a cool card passes the throttling check and the samples lie on the requests clock', () => {
    const { status, record, samples } = runs['h200-llama8b-bf16']!;
    // 0 or 1: timing checks (round spread, client lag) may rightly fail on a loaded machine; not this test's subject
    expect([0, 1]).toContain(status);
    expect(record.status).toBe('completed');
    expect(throttling(record)?.status).toBe('pass');
    const level = record.levels[0]!;
    expect(level.telemetry?.source).toBe('nvidia-smi');
    expect(level.telemetry?.samples).toBeGreaterThan(0);
    const gpu = samples.filter((s) => s.kind === 'gpu');
    const inWindow = gpu.filter((s) => s.tMs >= level.rounds[0]!.startMs && s.tMs <= level.rounds.at(-1)!.endMs);
    expect(inWindow.length).toBeGreaterThan(0);
    expect(record.environment.gpus?.[0]?.name).toBe('NVIDIA H200');
  });

  it('a card that runs hot fails the throttling check, and the run exits 1', () => {
    const { status, record } = runs['thermal-throttle-demo']!;
    expect(status).toBe(1);
    expect(throttling(record)?.status).toBe('fail');
    expect(throttling(record)?.code).toBe('gpu-slowed');
    expect(record.levels[0]!.telemetry!.throttle.thermalFraction).toBeGreaterThan(0);
  });

  it('a power-capped card only warns, and says it is normal at full load', () => {
    const { record } = runs['power-capped']!;
    expect(throttling(record)?.status).toBe('warn');
    expect(throttling(record)?.code).toBe('power-capped');
    expect(record.levels[0]!.telemetry!.throttle.powerCapFraction).toBeGreaterThan(0);
  });
});
