import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLIENT_LIMITS } from '../../src/core/checks/client-limits.js';
import {
  DEFAULT_PROFILE_NAME,
  DEFAULT_SIM_MODEL,
  loadProfile,
  parseFault,
  startSimServer,
} from '../../src/core/sim/index.js';
import { hostBusy } from '../../src/core/telemetry/host-pressure.js';
import type { Check, LevelResult, RunRecord } from '../../src/shared/run-record.js';
import { startBufferingProxy } from '../fakes/buffering-proxy.js';
import type { BufferingProxy, ProxyMode } from '../fakes/buffering-proxy.js';
import { startLlamaCppLike } from '../fakes/llamacpp-like-server.js';
import { runCliAsync } from '../fakes/run-cli.js';

/** A server behind the proxy: its URL, the model to ask for, the API to load, whether it times each request. */
interface Upstream {
  url: string;
  model: string;
  api: 'chat' | 'completions';
  close(): Promise<void>;
}

const UPSTREAMS: Record<string, () => Promise<Upstream>> = {
  // llama.cpp: 64 slots, a token every 8 ms per slot (64 tokens in about half a second), timings on the last chunk.
  'llama.cpp-like': async () => {
    const s = await startLlamaCppLike({ slots: 64, nCtx: 4096, tokenIntervalMs: 8 });
    return { url: s.url, model: 'llama-like.gguf', api: 'completions', close: () => s.close() };
  },
  // The simulator as vLLM: a token every 7–12 ms per request (the default profile's steps at c=1..64).
  simulator: async () => {
    const s = await startSimServer({ profile: loadProfile(DEFAULT_PROFILE_NAME), seed: 3 });
    return { url: s.url, model: DEFAULT_SIM_MODEL, api: 'chat', close: () => s.close() };
  },
};

/**
 * Each proxy kind and the streaming code its levels must get; `late`: the code its levels get instead when the proxy,
 * sharing this process with the test's servers, flushes late (a 150 ms timer firing after 250 ms on a loaded machine
 * holds most of a 64-token output in one burst, which is what a proxy passing the first token then holding does).
 */
const PROXIES: Array<{ name: string; mode: ProxyMode; code: string; late?: string }> = [
  { name: 'plain relay', mode: { kind: 'pass' }, code: 'streamed' },
  { name: 'hold-all', mode: { kind: 'hold-all' }, code: 'buffered-whole' },
  { name: 'pass-first-then-hold', mode: { kind: 'pass-first' }, code: 'buffered-after-first' },
  { name: 'flush every 150 ms', mode: { kind: 'flush-every', ms: 150 }, code: 'chunky', late: 'buffered-after-first' },
];

/** Levels run together: requests per round of each group (c=1 and 4 need few; c=16 and 64 one wave or more). */
const GROUPS: Array<{ concurrency: number[]; requests: number }> = [
  { concurrency: [1, 4], requests: 4 },
  { concurrency: [16, 64], requests: 64 },
];

const OUTPUT_LEN = 64;

let out: string;
let upstream: Upstream | null = null;
let proxy: BufferingProxy | null = null;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'sb-proxies-'));
});
afterEach(async () => {
  await proxy?.close();
  await upstream?.close();
  proxy = null;
  upstream = null;
  await rm(out, { recursive: true, force: true });
});

/** The verdict table this file prints at the end: upstream / proxy -> code per concurrency. */
const table = new Map<string, Map<number, string>>();
afterAll(() => {
  const levels = GROUPS.flatMap((g) => g.concurrency);
  const rows = [...table].map(
    ([name, byC]) => `${name.padEnd(38)} ${levels.map((c) => (byC.get(c) ?? '-').padEnd(28)).join('')}`,
  );
  console.log(
    ['', `${'streaming verdicts'.padEnd(38)} ${levels.map((c) => `c=${c}`.padEnd(28)).join('')}`, ...rows].join('\n'),
  );
});

async function runThrough(up: Upstream, concurrency: number[], requests: number): Promise<RunRecord> {
  const res = await runCliAsync([
    'run',
    '--url',
    proxy!.url,
    '--model',
    up.model,
    '--api',
    up.api,
    '--concurrency',
    concurrency.join(','),
    '--input-len',
    '64',
    '--output-len',
    String(OUTPUT_LEN),
    '--rounds',
    '1',
    '--requests-per-round',
    String(requests),
    '--warmup',
    '1',
    '--out',
    out,
  ]);
  const [name] = await readdir(out);
  expect(name, res.stderr).toBeDefined();
  const record = JSON.parse(await readFile(join(out, name as string, 'run.json'), 'utf8')) as RunRecord;
  expect(record.status, res.stderr).toBe('completed');
  return record;
}

/** What the level's verdict must be behind this proxy, allowing only what this machine's own load explains. */
function expectVerdict(level: LevelResult, proxy: (typeof PROXIES)[number], timesItself: boolean): void {
  const { code, late } = proxy;
  const c = level.checks.find((x) => x.id === 'streaming') as Check;
  const why = `c=${level.concurrency}: ${c.status} ${c.code}: ${c.detail}`;
  const lag = (c.facts?.clientLoopLagP99Ms as number | null) ?? 0;
  if (code === 'streamed') {
    // A real stream never fails; a starved machine may warn of a stall or of clumps it made itself, or that its reads
    // took several events at once (ITL then is the reads').
    expect(c.status, why).not.toBe('fail');
    // On a busy host (this client waited for a CPU) a minority of whole responses warns too: reads it merged.
    if (hostBusy(level.hostPressure) !== true) {
      expect(['streamed', 'stalled', 'clumped', 'itl-coalesced'], why).toContain(c.code);
    }
    return;
  }
  const proven =
    ((c.facts?.serverDecodeShortRequests as number | undefined) ?? 0) * 2 >
    ((c.facts?.serverTimedRequests as number | undefined) ?? 0);
  if (code === 'buffered-whole' && !proven && lag > CLIENT_LIMITS.loopLagWarnMs) {
    // Whole responses on a client past its lag limit: unless the server's timing proves them, it cannot tell.
    expect(c.code, why).toBe('client-lag');
    return;
  }
  const flushMs = proxy.mode.kind === 'flush-every' ? proxy.mode.ms : null;
  // A client whose own lag reaches the proxy's flush period cannot tell the proxy's holds from its own (the check
  // counts no burst within the client's lag): no verdict is owed.
  if (flushMs !== null && lag >= flushMs) return;
  expect(c.status, why).toBe('fail');
  expect([code, ...(late ? [late] : [])], why).toContain(c.code);
  if (timesItself && code === 'buffered-whole') {
    expect(c.facts?.serverDecodeShortRequests as number, why).toBeGreaterThan(
      (c.facts?.serverTimedRequests as number) / 2,
    );
  }
}

describe('streaming verdict behind proxies (a real TCP proxy in front of a real HTTP server)', () => {
  for (const [upName, start] of Object.entries(UPSTREAMS)) {
    for (const p of PROXIES) {
      for (const group of GROUPS) {
        const levels = group.concurrency.join(', ');
        it(`${upName} behind a ${p.name} proxy, c=${levels}: ${p.code}`, async () => {
          upstream = await start();
          proxy = await startBufferingProxy(upstream.url, p.mode);
          const record = await runThrough(upstream, group.concurrency, group.requests);
          if (p.mode.kind !== 'pass') expect(proxy.releases).toBeGreaterThan(0);
          const row = table.get(`${upName} / ${p.name}`) ?? new Map<number, string>();
          table.set(`${upName} / ${p.name}`, row);
          expect(record.levels.map((l) => l.concurrency)).toEqual(group.concurrency);
          for (const level of record.levels) {
            const c = level.checks.find((x) => x.id === 'streaming')!;
            row.set(level.concurrency, `${c.status} ${c.code ?? c.detail.slice(0, 20)}`);
            expect(level.failed, JSON.stringify(level.errorsByReason)).toBe(0);
            expectVerdict(level, p, upName === 'llama.cpp-like');
          }
        }, 180_000);
      }
    }
  }
});

describe('a stall is not buffering', () => {
  it('the simulator pausing 400 ms mid-stream (a long prefill of others, a preemption) behind a plain relay: stalled', async () => {
    const s = await startSimServer({
      profile: loadProfile(DEFAULT_PROFILE_NAME),
      seed: 3,
      faults: [parseFault('stall-ms=400')],
    });
    upstream = { url: s.url, model: DEFAULT_SIM_MODEL, api: 'chat', close: () => s.close() };
    proxy = await startBufferingProxy(upstream.url, { kind: 'pass' });
    const record = await runThrough(upstream, [1, 4], 4);
    for (const level of record.levels) {
      const c = level.checks.find((x) => x.id === 'streaming')!;
      expect(c.status, c.detail).toBe('warn');
      expect(c.code, c.detail).toBe('stalled');
      expect(c.facts?.maxGapMs as number).toBeGreaterThanOrEqual(400);
    }
  }, 180_000);
});
