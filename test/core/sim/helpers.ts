import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  applyOverrides,
  BASE_PROFILE,
  startSimServer,
  type SimEngineCounts,
  type SimOptions,
  type SimProfile,
  type SimServer,
  type TruthRecord,
} from '../../../src/core/sim/index.js';
import type { VirtualClock } from './virtual-clock.js';

/** A fresh temp folder for one test file. */
export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'servebench-sim-test-'));
}

/** A timed profile for shape tests: big enough steps that timer noise does not matter. */
export function testProfile(overrides: Record<string, unknown> = {}): SimProfile {
  return applyOverrides(
    { ...BASE_PROFILE, name: 'test' },
    {
      jitter: 0,
      'eos-prob': 0,
      'prefill-tok-per-s': 1_000_000,
      'step-base-ms': 5,
      'step-per-seq-ms': 0.5,
      ...overrides,
    },
    'test',
  );
}

const servers: SimServer[] = [];

/** Starts a sim and remembers it for closeAll(). */
export async function startSim(options: SimOptions): Promise<SimServer> {
  const s = await startSimServer({ log: () => undefined, ...options });
  servers.push(s);
  return s;
}

/** Closes every sim started by startSim. */
export async function closeAll(): Promise<void> {
  await Promise.all(servers.splice(0).map((s) => s.close()));
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** The data: payloads of an SSE body, in order ('[DONE]' kept as a string, JSON parsed when it parses). */
export function sseEvents(text: string): Array<{ raw: string; json: unknown }> {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => {
      const raw = block.slice('data: '.length);
      let json: unknown = null;
      try {
        json = JSON.parse(raw);
      } catch {
        json = null;
      }
      return { raw, json };
    });
}

export function readTruth(file: string): TruthRecord[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as TruthRecord);
}

/**
 * Polls a condition until it holds, bounded by generous wall time rather than a try count, so a
 * loaded machine (which polls less often) gets as long as a fast one. Never a way to wait out time.
 */
export async function waitFor<T>(
  fn: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 30_000,
  everyMs = 10,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Steps a sim's virtual clock one timer at a time until done() holds. Before each step it waits
 * (bounded by wall time) until settled(): every request the clients are due to send at this
 * virtual instant has reached the engine. Virtual time never moves while real I/O is in flight,
 * so every run, on any machine, goes through the same states.
 */
export async function stepUntil(
  clock: VirtualClock,
  s: SimServer,
  done: (c: SimEngineCounts) => boolean,
  settled: (c: SimEngineCounts) => boolean,
  maxSteps = 1_000_000,
): Promise<void> {
  for (let i = 0; i < maxSteps; i++) {
    if (done(s.engineCounts())) return;
    await waitFor(() => settled(s.engineCounts()), `the engine to settle (now ${JSON.stringify(s.engineCounts())})`);
    if (!clock.runNext()) throw new Error('stepUntil: no timer left, and not done');
  }
  throw new Error(`stepUntil: not done after ${maxSteps} timers`);
}

export const CHAT = (content: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  messages: [{ role: 'user', content }],
  ...extra,
});
