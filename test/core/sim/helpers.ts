import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  applyOverrides,
  BASE_PROFILE,
  startSimServer,
  type SimOptions,
  type SimProfile,
  type SimServer,
  type TruthRecord,
} from '../../../src/core/sim/index.js';

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

/** Polls a condition with a bounded number of tries (no fixed sleeps as a way to wait for an event). */
export async function waitFor<T>(
  fn: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  tries = 400,
  everyMs = 25,
): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export const CHAT = (content: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  messages: [{ role: 'user', content }],
  ...extra,
});
