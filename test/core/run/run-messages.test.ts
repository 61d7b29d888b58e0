import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunMessageLog } from '../../../src/core/run/run-messages.js';
import { RunSession } from '../../../src/core/run/run-session.js';
import { BenchConfigSchema, type BenchConfigInput } from '../../../src/shared/config.js';
import type { RunEvent } from '../../../src/shared/events.js';
import { MAX_RUN_MESSAGES, type LevelResult, type RunMessage, type RunRecord } from '../../../src/shared/run-record.js';
import { decodeRunJson } from '../../../src/shared/run-record-schema.js';
import { fixtureDir } from '../report/fixtures.js';

let out: string;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'sb-runmsgs-'));
});
afterEach(async () => {
  await rm(out, { recursive: true, force: true });
});

/** A session on a clock the test moves by hand. */
async function session(config: Partial<BenchConfigInput> = {}, env: NodeJS.ProcessEnv = {}) {
  let now = 0;
  const events: RunEvent[] = [];
  const run = await RunSession.create(
    BenchConfigSchema.parse({ out, label: 'm', server: { engine: 'attach', url: 'http://127.0.0.1:1' }, ...config }),
    {
      clock: { originMonoNs: 0n, nowMs: () => now },
      now: () => new Date(1_700_000_000_000 + now),
      emit: (e) => events.push(e),
      env,
      totalLevels: 2,
      capacitySearches: 0,
    },
  );
  return { run, events, at: (ms: number) => (now = ms) };
}

const say = (severity: RunMessage['severity'], text: string): RunEvent => ({ type: 'message', severity, text });

const levelStarted = (levelIndex: number, serverConfigIndex = 0): RunEvent => ({
  type: 'level-started',
  levelIndex,
  concurrency: 1,
  inputLen: 8,
  outputLen: 4,
  warmupRequests: 0,
  measuredRequests: 1,
  serverConfigIndex,
});

/** A real measured level, from the closed-loop fixture run. */
async function fixtureLevel(): Promise<LevelResult> {
  const record = JSON.parse(await readFile(join(fixtureDir('closed'), 'run.json'), 'utf8')) as RunRecord;
  return record.levels[0] as LevelResult;
}

/** run.json read back as servebench reads it. */
async function runJson(dir: string) {
  const decoded = decodeRunJson(await readFile(join(dir, 'run.json'), 'utf8'));
  if (!('record' in decoded)) throw new Error(decoded.problem);
  return decoded.record;
}

describe('RunMessageLog', () => {
  it('counts a repeated message instead of keeping it twice, and tells severities and server configurations apart', () => {
    const log = new RunMessageLog([]);
    log.add({ atMs: 1, severity: 'warn', text: 'a' });
    log.add({ atMs: 2, severity: 'warn', text: 'a' });
    log.add({ atMs: 3, severity: 'warn', text: 'a' });
    log.add({ atMs: 4, severity: 'info', text: 'a' });
    // Said again by another server configuration: kept apart.
    log.add({ atMs: 5, severity: 'warn', text: 'a', serverConfigIndex: 1 });
    log.add({ atMs: 6, severity: 'warn', text: 'a', serverConfigIndex: 1 });
    expect(log.messages).toEqual([
      { atMs: 1, severity: 'warn', text: 'a', count: 3 },
      { atMs: 4, severity: 'info', text: 'a' },
      { atMs: 5, severity: 'warn', text: 'a', serverConfigIndex: 1, count: 2 },
    ]);
  });

  it('keeps at most its limit of distinct messages and counts the rest as left out', () => {
    const log = new RunMessageLog([]);
    for (let i = 0; i < MAX_RUN_MESSAGES + 7; i++) log.add({ atMs: i, severity: 'warn', text: `m${i}` });
    // A message already kept is still counted once the log is full.
    log.add({ atMs: 9999, severity: 'warn', text: 'm0' });
    expect(log.messages).toHaveLength(MAX_RUN_MESSAGES);
    expect(log.leftOut).toBe(7);
    expect(log.messages[0]?.count).toBe(2);
  });
});

describe('RunSession messages', () => {
  it('keeps every message in run.json with its time on the run clock and the kept level it was said during', async () => {
    const { run, events, at } = await session();
    at(5);
    run.emit(say('info', 'server has no /tokenize: calibrated'));
    at(10);
    run.emit(levelStarted(0));
    at(12);
    run.emit(say('warn', 'the GPU did not cool to 50 °C within 10 minutes; level 1 starts warm'));
    await run.addLevel({ levelIndex: 0, firstId: 0, firstPromptIndex: 0 }, null);
    run.emit(levelStarted(1));
    at(20);
    run.emit(say('warn', 'a multi-turn history could not be counted (x)'));
    await run.addLevel({ levelIndex: 1, firstId: 0, firstPromptIndex: 0 }, await fixtureLevel());
    at(30);
    run.emit(say('error', 'after the levels'));
    // The host still sees every message.
    expect(events.filter((e) => e.type === 'message')).toHaveLength(4);
    // Written with the next record: a level that was not kept leaves its message without a level.
    const mid = await runJson(run.dir);
    expect(mid.messages).toEqual([
      { atMs: 5, severity: 'info', text: 'server has no /tokenize: calibrated' },
      { atMs: 12, severity: 'warn', text: 'the GPU did not cool to 50 °C within 10 minutes; level 1 starts warm' },
      { atMs: 20, severity: 'warn', text: 'a multi-turn history could not be counted (x)', levelIndex: 0 },
    ]);
    const { record } = await run.finish();
    expect(record.messages?.at(-1)).toEqual({ atMs: 30, severity: 'error', text: 'after the levels' });
    expect((await runJson(run.dir)).messages).toHaveLength(4);
  });

  it('writes no messages field when nothing was said, so older readers see the same record', async () => {
    const { run } = await session();
    await run.finish();
    const text = await readFile(join(run.dir, 'run.json'), 'utf8');
    expect(text).not.toContain('"messages"');
    expect(text).not.toContain('messagesLeftOut');
  });

  it('dedupes repeated messages in run.json and records how many were left out past the limit', async () => {
    const { run } = await session();
    for (let i = 0; i < 3; i++) run.emit(say('warn', 'server slow'));
    for (let i = 0; i < MAX_RUN_MESSAGES + 2; i++) run.emit(say('info', `note ${i}`));
    await run.finish();
    const record = await runJson(run.dir);
    expect(record.messages).toHaveLength(MAX_RUN_MESSAGES);
    expect(record.messages?.[0]).toMatchObject({ text: 'server slow', count: 3 });
    expect(record.messagesLeftOut).toBe(3);
  });

  it('names the server configuration in a run with several, from its start on', async () => {
    const { run } = await session({ serverVariants: [{ maxSeqs: 8 }, { maxSeqs: 16 }] });
    run.enterServerConfig(0);
    run.emit(levelStarted(0, 0));
    run.emit(say('warn', 'first'));
    run.enterServerConfig(1);
    run.emit(say('warn', 'second starting'));
    await run.finish();
    const record = await runJson(run.dir);
    expect(record.messages?.map((m) => [m.text, m.serverConfigIndex, m.levelIndex])).toEqual([
      ['first', 0, undefined],
      ['second starting', 1, undefined],
    ]);
  });

  it('never lets a secret said in a message reach the disk or the record', async () => {
    const key = 'sk-live-0123456789abcdefXYZ';
    const token = 'hf_TokenValueThatIsSecret42';
    const { run } = await session({ apiKey: key }, { HF_TOKEN: token });
    run.emit(say('warn', `server said: invalid key ${key}; HF_TOKEN=${token}; password=hunter2hunter2`));
    const { record } = await run.finish();
    const text = await readFile(join(run.dir, 'run.json'), 'utf8');
    for (const secret of [key, token, 'hunter2hunter2']) {
      expect(text).not.toContain(secret);
      expect(JSON.stringify(record.messages)).not.toContain(secret);
    }
    expect(record.messages?.[0]?.text).toContain('server said: invalid key');
  });
});
