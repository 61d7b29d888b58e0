import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { Clock } from '../../../src/core/clock.js';
import { outcomeToRecord } from '../../../src/core/load/outcome-to-record.js';
import { FULL_COMPAT, buildRequestBody } from '../../../src/core/load/request-body.js';
import { StreamAccumulator } from '../../../src/core/load/stream-accumulator.js';
import { createStreamClient, type RequestOutcome } from '../../../src/core/load/stream-client.js';
import { requestMetrics } from '../../../src/core/metrics/request-metrics.js';
import { summarizeLevel } from '../../../src/core/metrics/level-summary.js';
import { closeAll, readTruth, startSim, tempDir, testProfile, waitFor } from '../sim/helpers.js';
import { VirtualClock } from '../sim/virtual-clock.js';
import type { Mimic } from '../../../src/core/sim/index.js';
import { makeRecord } from '../metrics/make-record.js';

afterAll(closeAll);
const dir = tempDir();

const delta = (d: Record<string, string>, usage?: Record<string, unknown>): string =>
  JSON.stringify({ choices: [{ index: 0, delta: d, finish_reason: null }], ...(usage ? { usage } : {}) });

/**
 * Sends one streamed chat request to a sim on a virtual clock, with the client timestamping on the same clock.
 * The clock moves one engine step at a time, and only after the client has read what the last step wrote, so each
 * write is its own read on any machine.
 */
async function reasoningRequest(
  profileOverrides: Record<string, unknown>,
  outputLen: number,
  name: string,
  mimic: Mimic = 'vllm',
): Promise<{ outcome: RequestOutcome; truthFile: string }> {
  const truthFile = join(dir, `${name}.jsonl`);
  const vclock = new VirtualClock();
  // No GPU ticks: every timer left is an engine step, and every step writes to this one stream.
  const s = await startSim({
    profile: testProfile(profileOverrides),
    mimic,
    truthFile,
    clock: vclock,
    gpuTickMs: 1e12,
  });
  let reads = 0;
  const clock: Clock = {
    originMonoNs: 0n,
    nowMs: () => {
      reads++;
      return vclock.nowMs();
    },
  };
  const client = createStreamClient({ baseUrl: s.url, clock });
  const body = buildRequestBody({
    api: 'chat',
    model: 'servebench/sim-llama-8b',
    prompt: 'think about this',
    outputLen,
    ignoreEos: true,
    temperature: 0,
    stream: true,
    compat: FULL_COMPAT,
  });
  let settled = false;
  const pending = client
    .send({ id: 1, path: '/v1/chat/completions', body, timeoutMs: 600_000, requestTag: name })
    .finally(() => (settled = true));
  await waitFor(() => s.engineCounts().running + s.engineCounts().waiting === 1, 'the request to reach the engine');
  while (s.engineCounts().finished === 0) {
    const before = reads;
    if (!vclock.runNext()) throw new Error('no engine step left');
    await waitFor(() => reads > before || settled, 'the client to read the step');
  }
  const outcome = await pending;
  await client.close();
  await s.close();
  return { outcome, truthFile };
}

describe('reasoning streams', () => {
  it.each(['vllm', 'sglang'] as const)(
    'from the %s mimic: TTFT < TTFO, reasoning and answer tokens as its truth says (virtual time)',
    async (mimic) => {
      const { outcome, truthFile } = await reasoningRequest({ 'reasoning-tokens': 4 }, 10, `reasoning-${mimic}`, mimic);
      const record = outcomeToRecord(outcome, { levelIndex: 0, round: 0, expectedIn: 0, expectedOut: 10 });
      const [truth] = readTruth(truthFile);
      expect(record.ok).toBe(true);
      expect(record.firstTokenMs).not.toBeNull();
      expect(record.firstContentMs).not.toBeNull();
      const m = requestMetrics(record);
      expect(m.ttftMs!).toBeLessThan(m.ttfoMs!);
      // the answer starts 4 steps after the first reasoning token, as the truth log wrote it
      const ns = (v: string): number => Number(BigInt(v)) / 1e6;
      expect(record.firstContentMs! - record.firstTokenMs!).toBeCloseTo(
        ns(truth!.firstContentNs!) - ns(truth!.firstTokenNs!),
        6,
      );
      expect(truth).toMatchObject({ completionTokens: 10, reasoningTokens: 4 });
      // The energy truth: 10 decode steps of 5.5 ms alone on the GPU at its load power, plus the prompt's prefill.
      const p = testProfile();
      const loadW = p.gpuFullPowerW - p.gpuIdlePowerW;
      expect(truth!.energyJ! - truth!.prefillEnergyJ!).toBeCloseTo((loadW * 10 * 5.5) / 1000, 4);
      expect(truth!.prefillEnergyJ!).toBeCloseTo((loadW * truth!.promptTokens) / p.prefillTokPerS, 4);
      expect(record).toMatchObject({ nOut: 10, nReasoning: 4, nContent: 6, nReasoningSource: 'server' });

      const level = summarizeLevel({
        records: [record],
        concurrency: 1,
        inputLen: 0,
        outputLen: 10,
        rounds: 1,
        warmupRequests: 0,
        serverConfigIndex: 0,
        uniquePrefix: true,
      });
      expect(level.ttfoMs!.p50!).toBeGreaterThan(level.ttftMs.p50!);
      expect(level.reasoningTokens!.p50).toBe(4);
      expect(level.contentTokens!.p50).toBe(6);
      expect(level.reasoningTokensSource).toBe('server');
      // fixed output length still holds for the total
      expect(level.checks.find((c) => c.id === 'output-length')!.status).toBe('pass');
    },
  );

  it('a diffusion block that crosses into the answer is split; reasoning past max_tokens leaves no answer', async () => {
    const block = await reasoningRequest({ 'reasoning-tokens': 6, 'block-size': 4 }, 12, 'block');
    const b = outcomeToRecord(block.outcome, { levelIndex: 0, round: 0, expectedIn: 0, expectedOut: 12 });
    expect(b).toMatchObject({ nOut: 12, nReasoning: 6, nContent: 6, nReasoningSource: 'server' });
    // block 2 carries 2 reasoning and 2 answer tokens in one write: TTFO is that block's time
    expect(b.chunks.map((c) => c[1])).toEqual([4, 2, 2, 4]);
    expect(b.firstContentMs).toBe(b.chunks[2]![0]);
    expect(b.firstContentMs!).toBeGreaterThan(b.firstTokenMs!);

    const all = await reasoningRequest({ 'reasoning-tokens': 50 }, 5, 'all-reasoning');
    const a = outcomeToRecord(all.outcome, { levelIndex: 0, round: 0, expectedIn: 0, expectedOut: 5 });
    expect(a).toMatchObject({ nOut: 5, nReasoning: 5, nContent: 0, firstContentMs: null });
    expect(requestMetrics(a).ttfoMs).toBeNull();
    expect(readTruth(all.truthFile)[0]).toMatchObject({ reasoningTokens: 5, completionTokens: 5 });
  });
});

describe('StreamAccumulator with reasoning deltas', () => {
  it("reads SGLang's usage.reasoning_tokens; a count of 0 against reasoning chunks falls back to the chunks", () => {
    const sglang = new StreamAccumulator();
    sglang.onEvent(delta({ reasoning_content: 'hm' }), 1);
    sglang.onEvent(delta({ reasoning_content: 'so' }), 2);
    sglang.onEvent(delta({ content: 'yes' }), 3);
    sglang.onEvent(JSON.stringify({ choices: [], usage: { completion_tokens: 3, reasoning_tokens: 2 } }), 4);
    sglang.onEvent('[DONE]', 4);
    const r = sglang.result();
    expect(r).toMatchObject({ firstTokenMs: 1, firstContentMs: 3, sawReasoning: true, reasoningTokens: 2 });
    const rec = outcomeToRecord(
      { id: 1, requestTag: 't', sendMs: 0, endMs: 4, httpStatus: 200, result: r },
      { levelIndex: 0, round: 0, expectedIn: 0, expectedOut: 3 },
    );
    expect(rec).toMatchObject({ nReasoning: 2, nContent: 1, nReasoningSource: 'server' });

    const zero = new StreamAccumulator();
    zero.onEvent(delta({ reasoning: 'a' }), 1);
    zero.onEvent(delta({ reasoning: 'b' }), 2);
    zero.onEvent(delta({ reasoning: 'c' }), 3);
    zero.onEvent(delta({ content: 'd' }), 4);
    zero.onEvent(JSON.stringify({ choices: [], usage: { completion_tokens: 4, reasoning_tokens: 0 } }), 5);
    zero.onEvent('[DONE]', 5);
    const z = outcomeToRecord(
      { id: 2, requestTag: 't', sendMs: 0, endMs: 5, httpStatus: 200, result: zero.result() },
      { levelIndex: 0, round: 0, expectedIn: 0, expectedOut: 4 },
    );
    expect(z).toMatchObject({ nOut: 4, nReasoning: 3, nContent: 1, nReasoningSource: 'estimated', firstContentMs: 4 });
  });

  it('leaves every reasoning field out of a stream without reasoning', () => {
    const acc = new StreamAccumulator();
    acc.onEvent(delta({ content: 'a' }), 1);
    acc.onEvent('[DONE]', 2);
    const r = acc.result();
    expect(r.sawReasoning).toBe(false);
    expect(r.firstContentMs).toBeNull();
    const rec = outcomeToRecord(
      { id: 1, requestTag: 't', sendMs: 0, endMs: 2, httpStatus: 200, result: r },
      { levelIndex: 0, round: 0, expectedIn: 0, expectedOut: 1 },
    );
    expect('nReasoning' in rec || 'firstContentMs' in rec).toBe(false);
    const level = summarizeLevel({
      records: [makeRecord({ firstTokenMs: 1, endMs: 2, nOut: 1, chunks: [[1, 1]], clientChunkCount: 1 })],
      concurrency: 1,
      inputLen: 8,
      outputLen: 1,
      rounds: 1,
      warmupRequests: 0,
      serverConfigIndex: 0,
      uniquePrefix: true,
    });
    expect('ttfoMs' in level || 'reasoningTokens' in level).toBe(false);
  });
});
