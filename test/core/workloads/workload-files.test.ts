import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readJsonRecords } from '../../../src/core/workloads/json-records.js';
import { readPromptFile } from '../../../src/core/workloads/prompt-file.js';
import { readTrace, tracePlan } from '../../../src/core/workloads/trace.js';
import { loadWorkload, workloadProblem } from '../../../src/core/workloads/workload.js';
import { BenchConfigSchema, type BenchConfigInput } from '../../../src/shared/config.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sb-wlfiles-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, content: string | Buffer): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

const jsonl = (lines: unknown[]): string => lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
const config = (c: BenchConfigInput) => BenchConfigSchema.parse(c);

/** The one line a bad file gets (a UserError), or '' when it reads. */
async function refusal(read: () => Promise<unknown>): Promise<string> {
  try {
    await read();
    return '';
  } catch (error) {
    expect((error as Error).name).toBe('UserError');
    expect((error as Error).message).not.toContain('\n');
    return (error as Error).message;
  }
}

describe('prompt file reader', () => {
  it('reads prompt and messages lines, output_len, blank lines and a BOM', async () => {
    const p = await file(
      'ok.jsonl',
      '\uFEFF' +
        jsonl([{ prompt: 'one', output_len: 9 }]) +
        '\n  \n' +
        jsonl([
          {
            messages: [
              { role: 'system', content: 's' },
              { role: 'user', content: 'two' },
            ],
          },
        ]),
    );
    const entries = await readPromptFile(p, 10);
    expect(entries).toEqual([
      { sourceIndex: 0, text: 'one', outputLen: 9 },
      {
        sourceIndex: 1,
        messages: [
          { role: 'system', content: 's' },
          { role: 'user', content: 'two' },
        ],
      },
    ]);
  });

  it('reads ShareGPT as a JSON array or JSONL, skipping conversations without a human turn and a reply', async () => {
    const convo = (from: string, ask: string, reply?: string) => ({
      conversations: [{ from, value: ask }, ...(reply === undefined ? [] : [{ from: 'gpt', value: reply }])],
    });
    const list = [convo('human', 'a?', 'A.'), convo('gpt', 'no'), convo('human', 'alone'), convo('human', 'b?', 'B.')];
    const want = [
      { sourceIndex: 0, text: 'a?', reply: 'A.' },
      { sourceIndex: 3, text: 'b?', reply: 'B.' },
    ];
    expect(await readPromptFile(await file('s.json', JSON.stringify(list, null, 2)), 10)).toEqual(want);
    expect(await readPromptFile(await file('s.jsonl', jsonl(list)), 10)).toEqual(want);
    // Only as far as the run needs.
    expect(await readPromptFile(await file('s2.json', JSON.stringify(list)), 1)).toEqual(want.slice(0, 1));
  });

  it('reads a JSON array split anywhere across reads, with brackets and quotes inside strings', async () => {
    const tricky = Array.from({ length: 6000 }, (_, i) => ({ prompt: `p${i} é "[{,}]" \\ ${'x'.repeat(i % 700)}` }));
    const records = await readJsonRecords(await file('big.json', JSON.stringify(tricky)), { flag: '--prompts' });
    expect(records.map((r) => r.value)).toEqual(tricky);
  });

  it('refuses hostile files in one line naming the fix', async () => {
    const read = (name: string, content: string | Buffer) => async () => readPromptFile(await file(name, content), 10);
    expect(await refusal(async () => readPromptFile(join(dir, 'none.jsonl'), 10))).toMatch(
      /no such file.*check the path/,
    );
    expect(await refusal(read('empty.jsonl', ''))).toMatch(/is empty/);
    expect(await refusal(read('blank.jsonl', '\n \n'))).toMatch(/has no records/);
    expect(await refusal(read('page.jsonl', '<!DOCTYPE html><html>'))).toMatch(/is HTML.*download the raw file/);
    expect(await refusal(read('bin.jsonl', Buffer.from([0x7b, 0x00, 0x01, 0x02])))).toMatch(/binary/);
    expect(await refusal(read('csv.jsonl', 'prompt,len\nhi,3\n'))).toMatch(/not JSONL or a JSON array/);
    expect(await refusal(read('bad.jsonl', jsonl([{ prompt: 'a' }]) + '{"prompt": "b"\n'))).toMatch(
      /line 2 is not valid JSON .*: fix or remove that line/,
    );
    expect(await refusal(read('endless.jsonl', `{"prompt": "${'x'.repeat(17 << 20)}`))).toMatch(
      /line 1 is longer than 16 MiB/,
    );
    expect(await refusal(read('huge.jsonl', '{"prompt": "a", "output_len": 1e308}\n'))).toMatch(
      /line 1 has output_len 1e\+308: it must be a whole number from 1 to/,
    );
    expect(await refusal(read('neg.jsonl', jsonl([{ prompt: 'a', output_len: -3 }])))).toMatch(/output_len -3/);
    expect(await refusal(read('none.jsonl', jsonl([{ text: 'a' }])))).toMatch(/line 1 has neither "prompt"/);
    expect(await refusal(read('role.jsonl', jsonl([{ messages: [{ role: 'bot', content: 'x' }] }])))).toMatch(
      /message 1 needs a role/,
    );
    expect(await refusal(read('nouser.jsonl', jsonl([{ messages: [{ role: 'system', content: 'x' }] }])))).toMatch(
      /has no user message/,
    );
    expect(await refusal(read('open.json', '[{"prompt": "a"},'))).toMatch(/never closes/);
    expect(await refusal(read('gpt.json', JSON.stringify([{ conversations: [] }])))).toMatch(/no usable prompt/);
    expect(await refusal(async () => readPromptFile(dir, 10))).toMatch(/not a regular file/);
    // Leading blank lines past the first read chunk (1 MiB): the records after them, with their line numbers.
    const blank = '\n'.repeat(1_500_000);
    const padded = await file('padded.jsonl', `${blank}{"prompt": "a"}\n{"prompt": "b"\n`);
    expect(await refusal(async () => readPromptFile(padded, 10))).toMatch(/line 1500002 is not valid JSON/);
  });
});

describe('trace reader', () => {
  it('reads Mooncake lines in arrival order and plans one open-loop level at its rate', async () => {
    const p = await file(
      't.jsonl',
      jsonl([
        { timestamp: 0, input_length: 600, output_length: 3, hash_ids: [1, 2] },
        { timestamp: 2000, input_length: 100, output_length: 5, hash_ids: [9] },
        { timestamp: 1000, input_length: 200, output_length: 4 },
        { timestamp: 3000, input_length: 300, output_length: 6, hash_ids: [] },
      ]),
    );
    const entries = await readTrace(p);
    expect(entries.map((e) => e.sourceIndex)).toEqual([0, 2, 1, 3]);
    expect(entries[1]).toEqual({ sourceIndex: 2, timestampMs: 1000, inputLen: 200, outputLen: 4, hashIds: [] });
    // Every round replays the whole trace (or its first --requests-per-round arrivals).
    const plan = tracePlan(config({ trace: p, traceSpeed: 2, rounds: 2 }), entries);
    expect(plan).toMatchObject({ rounds: 2, requestsPerRound: 4, warmup: 0, inputLen: 300, outputLen: 5 });
    expect(tracePlan(config({ trace: p, requestsPerRound: 3, warmup: 1 }), entries)).toMatchObject({
      rounds: 3,
      requestsPerRound: 3,
      warmup: 1,
      schedule: [0, 1000, 2000],
    });
    // 4 arrivals over 1.5 s at double speed.
    expect(plan.schedule).toEqual([0, 500, 1000, 1500]);
    expect(plan.rate).toBeCloseTo(4 / 1.5, 3);
  });

  it('gives a trace whose arrivals span 0 ms no rate (a burst of N at once), never n / 1 ms', async () => {
    const same = await readTrace(
      await file('same.jsonl', jsonl([1, 2, 3].map(() => ({ timestamp: 500, input_length: 10, output_length: 2 })))),
    );
    const plan = tracePlan(config({ rounds: 1 }), same);
    expect(plan.rate).toBeUndefined();
    expect(plan).toMatchObject({ burst: 3, schedule: [500, 500, 500] });
    const one = await readTrace(await file('one.jsonl', jsonl([{ timestamp: 0, input_length: 10, output_length: 2 }])));
    const single = tracePlan(config({ rounds: 1 }), one);
    expect(single.rate).toBeUndefined();
    expect(single.burst).toBe(1);
  });

  it('refuses bad trace lines in one line', async () => {
    const read = (name: string, lines: unknown[]) => async () => readTrace(await file(name, jsonl(lines)));
    expect(await refusal(read('a.jsonl', [{ input_length: 5, output_length: 5 }]))).toMatch(
      /line 1 has no "timestamp"/,
    );
    expect(await refusal(read('b.jsonl', [{ timestamp: 0, output_length: 5 }]))).toMatch(/no "input_length"/);
    expect(await refusal(read('c.jsonl', [{ timestamp: 0, input_length: 1e300, output_length: 5 }]))).toMatch(
      /input_length 1e\+300/,
    );
    expect(await refusal(read('d.jsonl', [{ timestamp: -1, input_length: 5, output_length: 5 }]))).toMatch(
      /timestamp -1/,
    );
    expect(
      await refusal(read('e.jsonl', [{ timestamp: 0, input_length: 5, output_length: 5, hash_ids: ['a'] }])),
    ).toMatch(/hash_ids/);
  });
});

describe('workload settings', () => {
  it('refuses combinations that make no sense, one line each', () => {
    const problem = (c: BenchConfigInput) => workloadProblem(config(c));
    expect(problem({})).toBeNull();
    expect(problem({ prompts: 'p', trace: 't' })).toMatch(/pass one of them/);
    expect(problem({ prompts: 'p', prefixGroups: 2, prefixLen: 8 })).toMatch(/drop it, or drop --prompts/);
    expect(problem({ promptLengths: 'file' })).toMatch(/--prompt-lengths applies to --prompts/);
    expect(problem({ outputLengths: 'file' })).toMatch(/--output-lengths applies to --prompts/);
    expect(problem({ traceSpeed: 2 })).toMatch(/--trace-speed applies to --trace/);
    expect(problem({ prefixGroups: 2 })).toMatch(/needs --prefix-len/);
    expect(problem({ prefixLen: 64 })).toMatch(/needs --prefix-groups/);
    expect(problem({ prefixGroups: 2, prefixLen: 512, inputLen: [512] })).toMatch(
      /must be shorter than --input-len 512/,
    );
    expect(problem({ trace: 't', rate: [2] })).toMatch(/drop --rate/);
    expect(problem({ thinkTimeMs: 500 })).toMatch(/--think-time-ms .*add --turns K/);
    expect(problem({ thinkTimeMs: 500, turns: 2 })).toBeNull();
    expect(problem({ trace: 't', findCapacity: true })).toMatch(/--find-capacity chooses the loads: drop one/);
    expect(problem({ trace: 't', inputLen: [64, 128] })).toMatch(/lists/);
    expect(problem({ prompts: 'p', uniquePrefix: false })).toMatch(/--no-unique-prefix/);
    expect(problem({ turns: 3, prompts: 'p' })).toMatch(/drop --turns, or drop --prompts/);
    expect(problem({ turns: 3, trace: 't' })).toMatch(/drop --turns, or drop --trace/);
    expect(problem({ turns: 3, prefixGroups: 2, prefixLen: 8 })).toMatch(/drop --turns, or drop --prefix-groups/);
    expect(problem({ turns: 3 })).toBeNull();
  });

  it('refuses message lists on the completions API before the run', async () => {
    const p = await file('m.jsonl', jsonl([{ prompt: 'a' }, { messages: [{ role: 'user', content: 'b' }] }]));
    expect(await refusal(() => loadWorkload(config({ prompts: p, api: 'completions' })))).toMatch(
      /record 2 has "messages", which only the chat API takes/,
    );
    expect((await loadWorkload(config({ prompts: p }))).kind).toBe('file');
  });
});
