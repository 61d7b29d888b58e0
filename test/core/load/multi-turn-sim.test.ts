import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runBenchmark } from '../../../src/core/benchmark.js';
import { loadRunFolder } from '../../../src/core/report/load-run-folder.js';
import { htmlReport } from '../../../src/core/report/html.js';
import { markdownReport } from '../../../src/core/report/markdown.js';
import { DEFAULT_SIM_MODEL } from '../../../src/core/sim/index.js';
import { attachTo } from '../../fakes/attached-server.js';
import { BenchConfigSchema } from '../../../src/shared/config.js';
import type { RunEvent } from '../../../src/shared/events.js';
import type { RequestRecord } from '../../../src/shared/request-record.js';
import { decodeRunJson } from '../../../src/shared/run-record-schema.js';
import { closeAll, startSim, testProfile } from '../sim/helpers.js';

afterAll(closeAll);

/** Attaches the benchmark to an already running simulator. */
const attach = (url: string) => attachTo(url, { model: DEFAULT_SIM_MODEL, simulated: false });

/** The simulator's prefix-cache hit counter (prompt tokens served from the cache), from its /metrics. */
async function prefixHits(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('vllm:prefix_cache_hits_total'));
  return Number(line?.split(' ').pop());
}

describe('multi-turn against the simulator', () => {
  it('runs conversations whose expected input grows per turn, passes token agreement and hits the prefix cache', async () => {
    const sim = await startSim({ profile: testProfile({ 'step-base-ms': 1, 'step-per-seq-ms': 0.1 }) });
    const out = await mkdtemp(join(tmpdir(), 'sb-turns-'));
    try {
      const hitsBefore = await prefixHits(sim.url);
      const config = BenchConfigSchema.parse({
        out,
        label: 'turns',
        concurrency: [2],
        inputLen: [40],
        outputLen: [6],
        rounds: 2,
        requestsPerRound: 6,
        warmup: 0,
        turns: 3,
        server: { engine: 'attach', url: sim.url },
      });
      const result = await runBenchmark(config, { startServer: attach(sim.url) });
      expect(result.failure).toBeUndefined();
      const [level] = result.record.levels;
      const requests = (await readFile(join(result.dir, 'requests.jsonl'), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as RequestRecord);
      // 2 rounds x 2 conversations x 3 turns, all ok.
      expect(requests).toHaveLength(12);
      expect(requests.every((r) => r.ok)).toBe(true);
      const byConversation = new Map<number, RequestRecord[]>();
      for (const r of requests) {
        const c = r.workload!.conversation!;
        byConversation.set(c, [...(byConversation.get(c) ?? []), r]);
      }
      expect(byConversation.size).toBe(4);
      for (const turns of byConversation.values()) {
        turns.sort((a, b) => a.workload!.turn! - b.workload!.turn!);
        expect(turns.map((r) => r.workload!.turn)).toEqual([0, 1, 2]);
        // Each turn is sent after the previous one ended, and carries the whole history.
        expect(turns[1]!.sendMs).toBeGreaterThanOrEqual(turns[0]!.endMs!);
        expect(turns[2]!.sendMs).toBeGreaterThanOrEqual(turns[1]!.endMs!);
        expect(turns[0]!.expectedIn).toBe(40);
        // turn t: t earlier user messages (40 tokens each with the template) and answers (6 + 4 tokens of framing)
        expect(turns.map((r) => r.expectedIn)).toEqual([40, 40 + 10 + 36, 40 + 2 * (10 + 36)]);
        expect(turns.map((r) => r.nIn)).toEqual(turns.map((r) => r.expectedIn));
        expect(turns.every((r) => r.expectedInSource === undefined)).toBe(true);
      }
      // TTFT per turn in the level summary and in run.json.
      expect(level!.byTurn?.map((t) => [t.turn, t.ttftMs.n, t.inputTokens])).toEqual([
        [0, 4, 40],
        [1, 4, 86],
        [2, 4, 132],
      ]);
      expect(level!.byTurn!.every((t) => t.ttftMs.p50 !== null && t.ttftMs.p99 !== null)).toBe(true);
      const saved = decodeRunJson(await readFile(join(result.dir, 'run.json'), 'utf8'));
      expect('record' in saved && saved.record.levels[0]!.byTurn).toEqual(level!.byTurn);
      const folder = await loadRunFolder(result.dir);
      expect(htmlReport(folder)).toContain('<td class="nw">132</td>');
      const md = markdownReport(folder);
      expect(md).toContain('## TTFT per conversation turn');
      expect(md).toMatch(/\| c=2 40\/6 \| 3 \| 4 \| 132 \|/);
      const check = (id: string) => level!.checks.find((c) => c.id === id);
      expect(check('input-length')).toMatchObject({ status: 'pass' });
      expect(check('output-length')).toMatchObject({ status: 'pass' });
      expect(check('prefix-cache')).toMatchObject({ status: 'pass' });
      // Later turns resend the history: the simulator served part of it from its prefix cache.
      expect((await prefixHits(sim.url)) - hitsBefore).toBeGreaterThan(0);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });

  it('runs open-loop conversations (--turns 3 --rate 4): whole conversations, first turns scheduled, progress complete', async () => {
    const sim = await startSim({ profile: testProfile({ 'step-base-ms': 1, 'step-per-seq-ms': 0.1 }) });
    const out = await mkdtemp(join(tmpdir(), 'sb-turns-rate-'));
    try {
      const config = BenchConfigSchema.parse({
        out,
        label: 'turns-rate',
        rate: [4],
        inputLen: [40],
        outputLen: [6],
        rounds: 1,
        requestsPerRound: 12,
        warmup: 0,
        turns: 3,
        server: { engine: 'attach', url: sim.url },
      });
      const events: RunEvent[] = [];
      const result = await runBenchmark(config, { startServer: attach(sim.url), onEvent: (e) => events.push(e) });
      expect(result.failure).toBeUndefined();
      const [level] = result.record.levels;
      const requests = (await readFile(join(result.dir, 'requests.jsonl'), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as RequestRecord);
      // 12 requests: 4 conversations of 3 turns, each in order, all ok.
      expect(requests).toHaveLength(12);
      expect(requests.every((r) => r.ok)).toBe(true);
      const conversations = new Set(requests.map((r) => r.workload!.conversation));
      expect(conversations.size).toBe(4);
      for (const c of conversations) {
        const turns = requests.filter((r) => r.workload!.conversation === c);
        turns.sort((a, b) => a.workload!.turn! - b.workload!.turn!);
        expect(turns.map((r) => r.workload!.turn)).toEqual([0, 1, 2]);
        expect(turns[1]!.sendMs).toBeGreaterThanOrEqual(turns[0]!.endMs!);
        expect(turns[2]!.sendMs).toBeGreaterThanOrEqual(turns[1]!.endMs!);
        // The schedule belongs to the conversation's arrival: its first turn only.
        expect(turns.map((r) => r.scheduledMs !== undefined)).toEqual([true, false, false]);
      }
      expect(level).toMatchObject({ rate: 4, completed: 12, failed: 0 });
      expect(level!.skippedTurns).toBeUndefined();
      expect(level!.scheduleLagMs?.n).toBe(4);
      expect(level!.byTurn?.map((t) => [t.turn, t.ttftMs.n])).toEqual([
        [0, 4],
        [1, 4],
        [2, 4],
      ]);
      const done = events.flatMap((e) => (e.type === 'request-done' ? [[e.done, e.total]] : []));
      expect(done.at(-1)).toEqual([12, 12]);
      expect(level!.checks.find((c) => c.id === 'errors')).toMatchObject({ status: 'pass' });
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });
});
