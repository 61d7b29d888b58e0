import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FakeGpu } from '../../../src/core/sim/fake-gpu.js';
import { createRng } from '../../../src/core/rng.js';
import { Scheduler, type Seq } from '../../../src/core/sim/scheduler.js';
import type { TruthRecord } from '../../../src/core/sim/index.js';
import { closeAll, postJson, readTruth, startSim, stepUntil, tempDir, testProfile } from './helpers.js';
import { VirtualClock } from './virtual-clock.js';

afterAll(closeAll);
const dir = tempDir();
type Obj = Record<string, unknown>;

/** Closed loop: `concurrency` workers, each sending requests back to back, `total` in all. */
async function closedLoop(url: string, concurrency: number, total: number, body: Obj): Promise<void> {
  let next = 0;
  const worker = async (w: number): Promise<void> => {
    while (next < total) {
      const i = next++;
      const res = await postJson(`${url}/v1/completions`, body, { 'x-request-id': `c${concurrency}-w${w}-r${i}` });
      await res.text();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
}

interface Shape {
  tokPerSec: number;
  ttftMeanMs: number;
}

function shape(records: TruthRecord[]): Shape {
  const start = Math.min(...records.map((r) => Number(BigInt(r.receivedNs) / 1000n)));
  const end = Math.max(...records.map((r) => Number(BigInt(r.endNs!) / 1000n)));
  const tokens = records.reduce((a, r) => a + r.completionTokens, 0);
  const ttft = records.map((r) => Number(BigInt(r.firstTokenNs!) - BigInt(r.receivedNs)) / 1e6);
  return { tokPerSec: tokens / ((end - start) / 1e6), ttftMeanMs: ttft.reduce((a, b) => a + b, 0) / ttft.length };
}

/** Closed loop straight on the scheduler, in virtual time: exact figures of the step-time model. */
function virtualShape(concurrency: number, total: number): Shape {
  const profile = testProfile({ 'max-num-seqs': 8, 'step-base-ms': 10, 'step-per-seq-ms': 1 });
  const clock = new VirtualClock();
  const sched = new Scheduler(profile, createRng(1), null, clock);
  const t0 = clock.nowMs();
  const ttfts: number[] = [];
  let sent = 0;
  let tokens = 0;
  let end = t0;
  const send = (): void => {
    if (sent >= total) return;
    sent++;
    const at = clock.nowMs();
    let first = true;
    sched.submit({
      promptTokens: 8,
      cachedTokens: 0,
      target: 16,
      generated: 0,
      stallAt: -1,
      stallMs: 0,
      onTokens: (n, finished) => {
        tokens += n;
        if (first) ttfts.push(clock.nowMs() - at);
        first = false;
        if (finished) {
          end = clock.nowMs();
          send();
        }
      },
    });
  };
  for (let i = 0; i < concurrency; i++) send();
  clock.runAll();
  return { tokPerSec: tokens / ((end - t0) / 1000), ttftMeanMs: ttfts.reduce((a, b) => a + b, 0) / ttfts.length };
}

/**
 * The same closed loop over HTTP, on a virtual clock: the truth log is in virtual time, and the
 * clock moves only once every due request has arrived, so the figures are the model's on any machine.
 */
async function httpShape(concurrency: number, total: number, file: string): Promise<TruthRecord[]> {
  const profile = testProfile({ 'max-num-seqs': 8, 'step-base-ms': 10, 'step-per-seq-ms': 1 });
  const body = { prompt: 'The same short prompt for every request', max_tokens: 16, ignore_eos: true, stream: true };
  const clock = new VirtualClock();
  const truthFile = join(dir, file);
  const s = await startSim({ profile, truthFile, clock });
  const clients = closedLoop(s.url, concurrency, total, body);
  await stepUntil(
    clock,
    s,
    (c) => c.finished === total,
    (c) => c.running + c.waiting === Math.min(concurrency, total - c.finished),
  );
  await clients;
  await s.close();
  return readTruth(truthFile);
}

describe('sim continuous batching', () => {
  it('has the GPU shape in virtual time: throughput rises then flattens at max-num-seqs, TTFT grows', () => {
    const [one, eight, many] = [virtualShape(1, 4), virtualShape(8, 32), virtualShape(32, 64)];
    // c=1: 16 tokens x 11 ms steps; c=8: 8 sequences x 16 tokens per 16 x 18 ms.
    const near = (v: number, want: number): void => expect(Math.abs(v / want - 1)).toBeLessThan(0.02);
    near(one.tokPerSec, 16 / 0.176);
    near(eight.tokPerSec, 128 / 0.288);
    expect(many.tokPerSec / eight.tokPerSec).toBeGreaterThan(0.95);
    expect(many.tokPerSec / eight.tokPerSec).toBeLessThan(1.05);
    expect(many.ttftMeanMs / eight.ttftMeanMs).toBeGreaterThan(3);
  });

  it('shows the same shape end to end over HTTP, measured from the truth log (virtual time)', async () => {
    const results: Record<number, Shape> = {};
    for (const [c, total] of [
      [1, 2],
      [16, 32],
      [32, 64],
    ] as const) {
      const records = await httpShape(c, total, `batch-${c}.jsonl`);
      expect(records).toHaveLength(total);
      for (const r of records) {
        expect(r.requestId).toMatch(new RegExp(`^c${c}-`));
        expect(r.chunks.reduce((a, ch) => a + ch[1], 0)).toBe(16);
        expect(r.finishReason).toBe('length');
      }
      results[c] = shape(records);
    }
    const [one, sixteen, many] = [results[1]!, results[16]!, results[32]!];
    // The model's own figures, as the scheduler gives them in virtual time (prefill is ~0 here).
    const near = (v: number, want: number): void => expect(Math.abs(v / want - 1)).toBeLessThan(0.01);
    near(one.tokPerSec, 16 / 0.176);
    near(sixteen.tokPerSec, 128 / 0.288);
    near(many.tokPerSec, 128 / 0.288);
    // 8 seats: with 8 (c=16) or 24 (c=32) requests queued, the mean wait is about 0.5 or 1.5 batches.
    expect(many.ttftMeanMs / sixteen.ttftMeanMs).toBeGreaterThan(1.8);
  });

  it('goes through the same states on every run: the truth log of a virtual-time run is reproducible', async () => {
    const times = (rs: TruthRecord[]): string[] =>
      rs.map((r) => [r.receivedNs, r.firstTokenNs, ...r.chunks.map((c) => c[0]), r.endNs].join(' ')).sort();
    const a = await httpShape(16, 40, 'repeat-a.jsonl');
    const b = await httpShape(16, 40, 'repeat-b.jsonl');
    expect(times(a)).toEqual(times(b));
    // and at most max-num-seqs (8) sequences decode at once, all 8 seats filled by 16 clients
    const decoding = a.map((r) => {
      const first = BigInt(r.firstTokenNs!);
      return a.filter((o) => BigInt(o.firstTokenNs!) <= first && BigInt(o.endNs!) > first).length;
    });
    expect(Math.max(...decoding)).toBe(8);
  });

  it('writes one truth line per request in the documented format', async () => {
    const truthFile = join(dir, 'format.jsonl');
    const s = await startSim({ profile: testProfile(), truthFile });
    const before = process.hrtime.bigint();
    await (
      await postJson(
        `${s.url}/v1/completions`,
        { prompt: 'Hello', max_tokens: 3, ignore_eos: true, stream: true },
        { 'x-request-id': 'abc' },
      )
    ).text();
    await (await postJson(`${s.url}/v1/completions`, { prompt: 'Hello', max_tokens: 2, ignore_eos: true })).json();
    const after = process.hrtime.bigint();
    await s.close();
    const [a, b] = readTruth(truthFile);
    expect(Object.keys(a!).sort()).toEqual([
      'chunks',
      'completionTokens',
      'endNs',
      'energyJ',
      'finishReason',
      'firstTokenNs',
      'prefillEnergyJ',
      'promptTokens',
      'receivedNs',
      'requestId',
      'scheduledNs',
    ]);
    expect(a).toMatchObject({ requestId: 'abc', promptTokens: 2, completionTokens: 3, finishReason: 'length' });
    // the same clock as this process: hrtime.bigint as decimal strings, in order
    const ns = [a!.receivedNs, a!.scheduledNs!, a!.firstTokenNs!, ...a!.chunks.map((c) => c[0]), a!.endNs!].map(BigInt);
    expect(ns[0]! > before && ns.at(-1)! < after).toBe(true);
    for (let i = 1; i < ns.length; i++) expect(ns[i]! >= ns[i - 1]!).toBe(true);
    expect(a!.chunks.map((c) => c[1])).toEqual([1, 1, 1]);
    expect(b).toMatchObject({ requestId: null, completionTokens: 2 });
  });

  it('queues past the KV-cache capacity and preempts when it runs out (virtual time)', () => {
    const profile = testProfile({
      'max-num-seqs': 64,
      'kv-cache-tokens': 300,
      'max-model-len': 200,
      'step-base-ms': 1,
      'step-per-seq-ms': 0,
    });
    const clock = new VirtualClock();
    const sched = new Scheduler(profile, createRng(1), null, clock);
    let done = 0;
    const seqs: Seq[] = Array.from({ length: 4 }, () => ({
      promptTokens: 60,
      cachedTokens: 0,
      target: 80,
      generated: 0,
      stallAt: -1,
      stallMs: 0,
      onTokens: (_n: number, finished: boolean) => {
        if (finished) done++;
      },
    }));
    for (const s of seqs) sched.submit(s);
    // 4 x 61 tokens fit at first (244 <= 300); 4 x 140 at the end do not, so growth forces preemptions.
    clock.runAll();
    expect(done).toBe(4);
    expect(sched.stats.preemptions).toBeGreaterThan(0);
    expect(sched.kvUsed).toBe(0);
    expect(sched.running).toHaveLength(0);
    expect(sched.waiting).toHaveLength(0);
  });

  it('slows steps in proportion to a throttled GPU clock (virtual time)', () => {
    const profile = testProfile({ 'step-base-ms': 8, 'step-per-seq-ms': 0, jitter: 0.05 });
    const timeFor = (ratio: number): number => {
      const clock = new VirtualClock();
      const gpu = new FakeGpu(profile, clock.nowMs());
      gpu.clockRatio = ratio;
      const sched = new Scheduler(profile, createRng(1), gpu, clock);
      const t0 = clock.nowMs();
      let end = 0;
      sched.submit({
        promptTokens: 10,
        cachedTokens: 0,
        target: 30,
        generated: 0,
        stallAt: -1,
        stallMs: 0,
        onTokens: (_n, finished) => {
          if (finished) end = clock.nowMs();
        },
      });
      clock.runAll();
      return end - t0;
    };
    // Same seed, same jitter: exactly twice as long at half the clock.
    expect(timeFor(0.5) / timeFor(1)).toBeCloseTo(2, 9);
  });
});

describe('sim diffusion block mode', () => {
  it('names its denoising steps per block in its first log line', async () => {
    const lines: string[] = [];
    await startSim({ profile: testProfile({ 'block-size': 32, threshold: 0.95 }), log: (l) => lines.push(l) });
    expect(lines[0]).toMatch(
      /^servebench sim: SIMULATED .*; block diffusion: 32-token blocks at threshold 0\.95 take 18 denoising steps each$/,
    );
    const plain: string[] = [];
    await startSim({ profile: testProfile(), log: (l) => plain.push(l) });
    expect(plain[0]).toMatch(/^servebench sim: SIMULATED .*seed-deterministic$/);
  });

  it('sends a whole block per chunk; continuous usage jumps by the block size', async () => {
    const s = await startSim({ profile: testProfile({ 'block-size': 8, threshold: 0.9, 'step-base-ms': 1 }) });
    const text = await (
      await postJson(`${s.url}/v1/completions`, {
        prompt: 'x',
        max_tokens: 20,
        ignore_eos: true,
        stream: true,
        stream_options: { continuous_usage_stats: true },
      })
    ).text();
    const usage = text
      .split('\n\n')
      .filter((b) => b.startsWith('data: {'))
      .map((b) => ((JSON.parse(b.slice(6)) as Obj).usage as Obj).completion_tokens);
    expect(usage).toEqual([8, 16, 20]);
  });

  it('is faster at a lower threshold: fewer denoising steps per block (virtual time)', async () => {
    const timeAt = async (threshold: number): Promise<number> => {
      const truthFile = join(dir, `diffusion-${threshold}.jsonl`);
      const clock = new VirtualClock();
      const s = await startSim({
        profile: testProfile({ 'block-size': 32, threshold, 'step-base-ms': 4, 'step-per-seq-ms': 0 }),
        truthFile,
        clock,
      });
      const text = postJson(`${s.url}/v1/completions`, { prompt: 'x', max_tokens: 64, ignore_eos: true, stream: true });
      await stepUntil(
        clock,
        s,
        (c) => c.finished === 1,
        (c) => c.running + c.waiting === 1 - c.finished,
      );
      await (await text).text();
      await s.close();
      const [t] = readTruth(truthFile);
      expect(t!.chunks.map((c) => c[1])).toEqual([32, 32]);
      return Number(BigInt(t!.endNs!) - BigInt(t!.receivedNs)) / 1e6;
    };
    const slow = await timeAt(0.95); // 18 steps per block
    const fast = await timeAt(0.8); // 3 steps per block
    // two blocks of 4 ms steps, plus the same prefill of a 2-token prompt
    expect(slow - fast).toBeCloseTo(2 * (18 - 3) * 4, 6);
    expect(fast).toBeGreaterThanOrEqual(2 * 3 * 4);
    expect(fast).toBeLessThan(2 * 3 * 4 + 1);
  });
});
