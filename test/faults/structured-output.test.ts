import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RequestRecord } from '../../src/shared/request-record.js';
import type { Check, RunRecord } from '../../src/shared/run-record.js';
import { runCliAsync } from '../fakes/run-cli.js';
import { startStructuredHostile, type StructuredFault } from '../fakes/structured-hostile-server.js';

const PERSON = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 2 },
    age: { type: 'integer', minimum: 0, maximum: 120 },
    tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
  },
  required: ['name', 'age', 'tags'],
  additionalProperties: false,
};
const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
        required: ['city', 'unit'],
      },
    },
  },
];

const cleanups: Array<() => Promise<void>> = [];
let dir: string;
let out: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sb-structured-'));
  out = join(dir, 'runs');
  await writeFile(join(dir, 'person.json'), JSON.stringify(PERSON));
  await writeFile(join(dir, 'tools.json'), JSON.stringify(TOOLS));
});
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
  await rm(dir, { recursive: true, force: true });
});

const TINY = ['--rounds', '1', '--warmup', '0', '--concurrency', '2', '--requests-per-round', '6'];
const LENS = ['--input-len', '32', '--output-len', '64'];

async function run(args: string[]) {
  const res = await runCliAsync(['run', ...TINY, ...LENS, '--out', out, ...args]);
  const names = await readdir(out).catch(() => []);
  if (names.length === 0) return { ...res, record: null, requests: [] as RequestRecord[] };
  const folder = join(out, names[0]!);
  const record = JSON.parse(await readFile(join(folder, 'run.json'), 'utf8')) as RunRecord;
  const requests = (await readFile(join(folder, 'requests.jsonl'), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RequestRecord);
  return { ...res, record, requests };
}

function check(record: RunRecord | null): Check & { code?: string; facts?: Record<string, unknown> } {
  const found = record?.levels[0]?.checks.find((c) => c.id === 'structured-output');
  expect(found, 'structured-output check').toBeDefined();
  return found as Check & { code?: string; facts?: Record<string, unknown> };
}

async function hostile(fault: StructuredFault) {
  const server = await startStructuredHostile(fault);
  cleanups.push(() => server.close());
  return server;
}

describe('structured output against the simulator', () => {
  it.each([
    ['json-schema', () => `json-schema=${join(dir, 'person.json')}`],
    ['regex', () => 'regex=[A-Z]{3}-\\d{4}'],
    ['choice', () => 'choice=positive,negative,neutral'],
  ])('--response-format %s: every answer valid, the check passes and the validity rate is 1', async (_k, value) => {
    const res = await run(['--engine', 'sim', '--response-format', value()]);
    expect(res.record?.status, res.stderr).toBe('completed');
    expect(check(res.record)).toMatchObject({ status: 'pass', code: 'all-valid', facts: { answers: 6, invalid: 0 } });
    expect(res.record?.levels[0]?.structuredValidRate).toBe(1);
    // A constrained answer ends with its grammar: no output-length check, and its tokens were timed.
    expect(res.record?.levels[0]?.checks.some((c) => c.id === 'output-length')).toBe(false);
    const measured = res.requests.filter((r) => !r.warmup);
    expect(measured.every((r) => r.structured?.valid === true && r.firstTokenMs !== null)).toBe(true);
  });

  it('--tools: each answer is one streamed tool call whose arguments match the parameters; its first delta is the first token', async () => {
    const res = await run(['--engine', 'sim', '--tools', join(dir, 'tools.json')]);
    expect(check(res.record)).toMatchObject({ status: 'pass', code: 'all-valid', facts: { toolCalls: 6 } });
    const measured = res.requests.filter((r) => !r.warmup);
    expect(measured.every((r) => r.finishReason === 'tool_calls' && r.nOut > 1 && r.ttftMs !== null)).toBe(true);
    expect(res.record?.levels[0]?.tpotMs.n).toBeGreaterThan(0);
  });
});

describe('structured output against a server that does not honour it', () => {
  it('a server that ignores the schema (free text) fails the check as a silent fallback', async () => {
    const server = await hostile('plain-text');
    const res = await run(['--url', server.url, '--response-format', `json-schema=${join(dir, 'person.json')}`]);
    expect(server.requests.at(-1)).toMatchObject({ response_format: { type: 'json_schema' } });
    expect(server.requests.at(-1)).not.toHaveProperty('ignore_eos');
    expect(check(res.record)).toMatchObject({ status: 'fail', code: 'ignored', facts: { answers: 6, invalid: 6 } });
    expect(check(res.record).facts?.problems).toBe('not-json 6');
    expect(res.record?.levels[0]?.structuredValidRate).toBe(0);
  });

  it.each([
    ['broken-json', 'not-json'],
    ['wrong-type', 'schema'],
  ] as const)('%s answers fail with %s', async (fault, problem) => {
    const server = await hostile(fault);
    const res = await run(['--url', server.url, '--response-format', `json-schema=${join(dir, 'person.json')}`]);
    expect(check(res.record)).toMatchObject({ status: 'fail', facts: { problems: `${problem} 6` } });
  });

  it('half the answers wrong: the check fails as invalid and the rate is 0.5', async () => {
    const server = await hostile('half-valid');
    const res = await run(['--url', server.url, '--response-format', `json-schema=${join(dir, 'person.json')}`]);
    expect(check(res.record)).toMatchObject({ status: 'fail', code: 'invalid', facts: { invalid: 3, share: 0.5 } });
    expect(res.record?.levels[0]?.structuredValidRate).toBe(0.5);
  });

  it.each([
    ['text-not-tool', 'fail', 'no-tool-call 6'],
    ['bad-tool-args', 'fail', 'tool-args-schema 6'],
  ] as const)('tools on %s: %s (%s)', async (fault, status, problems) => {
    const server = await hostile(fault);
    const res = await run(['--url', server.url, '--tools', join(dir, 'tools.json'), '--tool-choice', 'get_weather']);
    expect(server.requests.at(-1)).toMatchObject({
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    expect(check(res.record)).toMatchObject({ status, facts: { problems } });
  });

  it('streamed tool-call arguments are the output: timed from the first delta and counted', async () => {
    const server = await hostile('valid-tool');
    const res = await run(['--url', server.url, '--tools', join(dir, 'tools.json')]);
    expect(check(res.record)).toMatchObject({ status: 'pass', facts: { toolCalls: 6 } });
    const r = res.requests.find((x) => !x.warmup)!;
    expect(r.chunks.length).toBe(Math.ceil('{"city":"Paris","unit":"celsius"}'.length / 3));
    expect(r.firstTokenMs).toBe(r.chunks[0]![0]);
  });
});

describe('structured-output settings refused up front', () => {
  it.each([
    [['--response-format', 'yaml=x'], /--response-format/],
    [['--tool-choice', 'auto'], /--tool-choice applies to --tools/],
    [['--tools', 'TOOLS', '--api', 'completions'], /--tools applies to --api chat/],
    [['--tools', 'TOOLS', '--tool-choice', 'nope'], /no tool of .* has that name/],
    [['--response-format', 'json-schema=/nonexistent.json'], /cannot read it/],
  ])('%j', async (args, message) => {
    const res = await run(['--engine', 'sim', ...args.map((a) => (a === 'TOOLS' ? join(dir, 'tools.json') : a))]);
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(message);
    expect(res.record).toBeNull();
  });
});
