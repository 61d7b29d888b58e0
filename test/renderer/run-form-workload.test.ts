import { formOf } from './form-of.js';
import { describe, expect, it } from 'vitest';
import {
  WORKLOADS,
  WORKLOAD_FIELDS,
  buildConfig,
  chooseWorkload,
  defaultForm,
  unusedSweepFields,
  workloadErrorField,
  workloadOf,
  type RunForm,
  type WorkloadMode,
} from '../../src/renderer/lib/run-form.js';
import { workloadProblem } from '../../src/core/workloads/workload.js';
import { BenchConfigSchema } from '../../src/shared/config.js';
import { FIELDS } from '../../src/shared/fields.js';

/** Each workload's fields, filled as a user would. */
const FILLED: Record<WorkloadMode, Record<string, string>> = {
  synthetic: {},
  file: { prompts: '/data/prompts.jsonl', 'prompt-lengths': 'file', 'output-lengths': 'file' },
  'shared-prefix': { 'prefix-groups': '4', 'prefix-len': '384' },
  'multi-turn': { turns: '3', 'think-time-ms': '250' },
  trace: { trace: '/data/trace.jsonl', 'trace-speed': '2' },
};

/** Every workload field filled at once: what a form with no workload choice could end up holding. */
function everythingFilled(): RunForm {
  return formOf(Object.assign({}, ...Object.values(FILLED)));
}

describe('new-run form: the Workload choice', () => {
  it('starts on fixed lengths with every workload field empty', () => {
    const form = defaultForm();
    expect(workloadOf(form)).toBe('synthetic');
    for (const name of WORKLOAD_FIELDS) expect(form.values[name]).toBe('');
  });

  it.each(WORKLOADS.map((w) => w.id))('switching to %s clears the fields of every other workload', (mode) => {
    const form = chooseWorkload(everythingFilled(), mode);
    expect(form.workload).toBe(mode);
    const own = WORKLOADS.find((w) => w.id === mode)!.fields;
    for (const name of WORKLOAD_FIELDS) {
      expect(form.values[name]).toBe(own.includes(name) ? FILLED[mode][name] : '');
    }
    // The rest of the form is left as it was.
    expect(form.values.concurrency).toBe(defaultForm().values.concurrency);
  });

  it.each(WORKLOADS.map((w) => w.id))(
    '%s: the config built is valid for the schema and the core accepts its workload',
    (mode) => {
      const form = formOf(FILLED[mode], chooseWorkload(defaultForm(), mode));
      const built = buildConfig(form);
      expect(built.ok).toBe(true);
      if (!built.ok) return;
      const parsed = BenchConfigSchema.safeParse(built.config);
      expect(parsed.success).toBe(true);
      if (!parsed.success) return;
      expect(workloadProblem(parsed.data)).toBeNull();
      const flagOf = (key: string): string | undefined => FIELDS.find((f) => f.path === key)?.flag;
      const sent = Object.keys(built.config).filter((k) => WORKLOAD_FIELDS.includes(flagOf(k) ?? ''));
      expect(sent.map(flagOf).sort()).toEqual(Object.keys(FILLED[mode]).sort());
    },
  );

  it("sends only the chosen workload even if another one's fields hold values (a stale form)", () => {
    const built = buildConfig(formOf({ workload: 'shared-prefix' }, everythingFilled()));
    expect(built.ok).toBe(true);
    if (!built.ok) return;
    expect(built.config).toMatchObject({ prefixGroups: 4, prefixLen: 384 });
    for (const key of ['prompts', 'promptLengths', 'outputLengths', 'trace', 'traceSpeed', 'turns', 'thinkTimeMs'])
      expect(built.config).not.toHaveProperty(key);
    expect(workloadProblem(BenchConfigSchema.parse(built.config))).toBeNull();
  });

  it('the fields of each workload, as sent', () => {
    const config = (mode: WorkloadMode) => {
      const built = buildConfig(formOf(FILLED[mode], chooseWorkload(defaultForm(), mode)));
      if (!built.ok) throw new Error(built.error);
      return built.config;
    };
    expect(config('file')).toMatchObject({
      prompts: '/data/prompts.jsonl',
      promptLengths: 'file',
      outputLengths: 'file',
      concurrency: [1, 4, 16],
    });
    expect(config('multi-turn')).toMatchObject({ turns: 3, thinkTimeMs: 250, concurrency: [1, 4, 16] });
    // A trace brings its own arrivals and lengths: the sweep's are not sent (the core refuses a rate or length lists).
    const trace = config('trace');
    expect(trace).toMatchObject({ trace: '/data/trace.jsonl', traceSpeed: 2 });
    for (const key of ['concurrency', 'rate', 'inputLen', 'outputLen']) expect(trace).not.toHaveProperty(key);
  });

  it('a trace with a rate and length lists typed in the sweep still builds a config the core accepts', () => {
    const form = formOf(
      { trace: '/data/t.jsonl', rate: '2,4', 'input-len': '128,256', 'output-len': '16,32' },
      chooseWorkload(defaultForm(), 'trace'),
    );
    const built = buildConfig(form);
    expect(built.ok).toBe(true);
    if (built.ok) expect(workloadProblem(BenchConfigSchema.parse(built.config))).toBeNull();
  });

  it('a trace leaves the Sweep fields it does not use unread: disabled in the form, even an invalid value stops nothing', () => {
    expect(unusedSweepFields('trace')).toEqual({
      fields: ['concurrency', 'rate', 'input-len', 'output-len'],
      note: 'from the trace',
    });
    for (const mode of ['synthetic', 'file', 'shared-prefix', 'multi-turn'] as const)
      expect(unusedSweepFields(mode).fields).toEqual([]);
    const form = formOf(
      { trace: '/data/t.jsonl', concurrency: '1,x', rounds: '2' },
      chooseWorkload(defaultForm(), 'trace'),
    );
    const built = buildConfig(form);
    expect(built).toMatchObject({ ok: true, config: { trace: '/data/t.jsonl', rounds: 2 } });
    // The same value with fixed lengths is the form's own refusal, on the field.
    expect(buildConfig(formOf({ workload: 'synthetic', trace: '' }, form))).toMatchObject({
      ok: false,
      field: 'concurrency',
    });
  });

  it.each([
    ['file', 'prompts', /prompt file's path/],
    ['trace', 'trace', /trace file's path/],
    ['shared-prefix', 'prefix-groups', /number of prefix groups/],
    ['multi-turn', 'turns', /2 or more/],
  ] as const)('%s without its %s: one line naming the field', (mode, field, line) => {
    const built = buildConfig(chooseWorkload(defaultForm(), mode));
    expect(built).toEqual({ ok: false, field, error: expect.stringMatching(line) });
  });

  it('shared prefix needs its length too; multi-turn refuses a single turn', () => {
    const prefix = buildConfig(formOf({ 'prefix-groups': '4' }, chooseWorkload(defaultForm(), 'shared-prefix')));
    expect(prefix).toMatchObject({ ok: false, field: 'prefix-len' });
    const turns = buildConfig(formOf({ turns: '1' }, chooseWorkload(defaultForm(), 'multi-turn')));
    expect(turns).toMatchObject({ ok: false, field: 'turns', error: expect.stringMatching(/2 or more/) });
  });

  it('a form saved before the choice existed shows the workload its fields hold', () => {
    const old = (fields: Record<string, string>) =>
      formOf({
        workload: undefined as unknown as WorkloadMode,
        ...fields,
      });
    expect(workloadOf(old({ prompts: 'p.jsonl' }))).toBe('file');
    expect(workloadOf(old({ trace: 't.jsonl' }))).toBe('trace');
    expect(workloadOf(old({ 'prefix-len': '64' }))).toBe('shared-prefix');
    expect(workloadOf(old({ turns: '4' }))).toBe('multi-turn');
    expect(workloadOf(old({ turns: '1' }))).toBe('synthetic');
    expect(workloadOf(formOf({ workload: 'bogus' as WorkloadMode }))).toBe('synthetic');
  });

  it('finds the workload field a core refusal names, so the line shows beside the Workload section', () => {
    const config = BenchConfigSchema.parse({ prefixGroups: 4, prefixLen: 600, inputLen: [512] });
    expect(workloadErrorField(workloadProblem(config)!)).toBe('prefix-len');
    const noUnique = BenchConfigSchema.parse({ prompts: 'p.jsonl', uniquePrefix: false });
    expect(workloadErrorField(workloadProblem(noUnique)!)).toBe('prompts');
    const traceRate = BenchConfigSchema.parse({ trace: 't.jsonl', rate: [2] });
    expect(workloadErrorField(workloadProblem(traceRate)!)).toBe('trace');
    expect(workloadErrorField('cannot read --prompts /x.jsonl: no such file (check the path)')).toBe('prompts');
    expect(workloadErrorField("invalid setting 'turns': at most 1,000")).toBe('turns');
    expect(workloadErrorField("invalid setting 'concurrency.0': Too small")).toBeUndefined();
    expect(workloadErrorField('a run is already in progress: run x is still going')).toBeUndefined();
  });
});
