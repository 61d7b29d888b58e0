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

/** Each workload's fields, filled as a user would. */
const FILLED: Record<WorkloadMode, Partial<RunForm>> = {
  synthetic: {},
  file: { prompts: '/data/prompts.jsonl', promptLengths: 'file', outputLengths: 'file' },
  'shared-prefix': { prefixGroups: '4', prefixLen: '384' },
  'multi-turn': { turns: '3', thinkTimeMs: '250' },
  trace: { trace: '/data/trace.jsonl', traceSpeed: '2' },
};

/** Every workload field filled at once: what a form with no workload choice could end up holding. */
function everythingFilled(): RunForm {
  return Object.assign(defaultForm(), ...Object.values(FILLED)) as RunForm;
}

describe('new-run form: the Workload choice', () => {
  it('starts on fixed lengths with every workload field empty', () => {
    const form = defaultForm();
    expect(workloadOf(form)).toBe('synthetic');
    for (const name of WORKLOAD_FIELDS) expect(form[name]).toBe('');
  });

  it.each(WORKLOADS.map((w) => w.id))('switching to %s clears the fields of every other workload', (mode) => {
    const form = chooseWorkload(everythingFilled(), mode);
    expect(form.workload).toBe(mode);
    const own = WORKLOADS.find((w) => w.id === mode)!.fields;
    for (const name of WORKLOAD_FIELDS) {
      expect(form[name]).toBe(own.includes(name) ? (FILLED[mode] as Record<string, string>)[name] : '');
    }
    // The rest of the form is left as it was.
    expect(form.concurrency).toBe(defaultForm().concurrency);
  });

  it.each(WORKLOADS.map((w) => w.id))(
    '%s: the config built is valid for the schema and the core accepts its workload',
    (mode) => {
      const form = { ...chooseWorkload(defaultForm(), mode), ...FILLED[mode] };
      const built = buildConfig(form);
      expect(built.ok).toBe(true);
      if (!built.ok) return;
      const parsed = BenchConfigSchema.safeParse(built.config);
      expect(parsed.success).toBe(true);
      if (!parsed.success) return;
      expect(workloadProblem(parsed.data)).toBeNull();
      const sent = Object.keys(built.config).filter((k) => (WORKLOAD_FIELDS as string[]).includes(k));
      expect(sent.sort()).toEqual(Object.keys(FILLED[mode]).sort());
    },
  );

  it("sends only the chosen workload even if another one's fields hold values (a stale form)", () => {
    const built = buildConfig({ ...everythingFilled(), workload: 'shared-prefix' });
    expect(built.ok).toBe(true);
    if (!built.ok) return;
    expect(built.config).toMatchObject({ prefixGroups: 4, prefixLen: 384 });
    for (const key of ['prompts', 'promptLengths', 'outputLengths', 'trace', 'traceSpeed', 'turns', 'thinkTimeMs'])
      expect(built.config).not.toHaveProperty(key);
    expect(workloadProblem(BenchConfigSchema.parse(built.config))).toBeNull();
  });

  it('the fields of each workload, as sent', () => {
    const config = (mode: WorkloadMode) => {
      const built = buildConfig({ ...chooseWorkload(defaultForm(), mode), ...FILLED[mode] });
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
    const form = {
      ...chooseWorkload(defaultForm(), 'trace'),
      trace: '/data/t.jsonl',
      rate: '2,4',
      inputLen: '128,256',
      outputLen: '16,32',
    };
    const built = buildConfig(form);
    expect(built.ok).toBe(true);
    if (built.ok) expect(workloadProblem(BenchConfigSchema.parse(built.config))).toBeNull();
  });

  it('a trace leaves the Sweep fields it does not use unread: disabled in the form, even an invalid value stops nothing', () => {
    expect(unusedSweepFields('trace')).toEqual({
      fields: ['concurrency', 'rate', 'inputLen', 'outputLen'],
      note: 'from the trace',
    });
    for (const mode of ['synthetic', 'file', 'shared-prefix', 'multi-turn'] as const)
      expect(unusedSweepFields(mode).fields).toEqual([]);
    const form = { ...chooseWorkload(defaultForm(), 'trace'), trace: '/data/t.jsonl', concurrency: '1,x', rounds: '2' };
    const built = buildConfig(form);
    expect(built).toMatchObject({ ok: true, config: { trace: '/data/t.jsonl', rounds: 2 } });
    // The same value with fixed lengths is the form's own refusal, on the field.
    expect(buildConfig({ ...form, workload: 'synthetic', trace: '' })).toMatchObject({
      ok: false,
      field: 'concurrency',
    });
  });

  it.each([
    ['file', 'prompts', /prompt file's path/],
    ['trace', 'trace', /trace file's path/],
    ['shared-prefix', 'prefixGroups', /number of prefix groups/],
    ['multi-turn', 'turns', /2 or more/],
  ] as const)('%s without its %s: one line naming the field', (mode, field, line) => {
    const built = buildConfig(chooseWorkload(defaultForm(), mode));
    expect(built).toEqual({ ok: false, field, error: expect.stringMatching(line) });
  });

  it('shared prefix needs its length too; multi-turn refuses a single turn', () => {
    const prefix = buildConfig({ ...chooseWorkload(defaultForm(), 'shared-prefix'), prefixGroups: '4' });
    expect(prefix).toMatchObject({ ok: false, field: 'prefixLen' });
    const turns = buildConfig({ ...chooseWorkload(defaultForm(), 'multi-turn'), turns: '1' });
    expect(turns).toMatchObject({ ok: false, field: 'turns', error: expect.stringMatching(/2 or more/) });
  });

  it('a form saved before the choice existed shows the workload its fields hold', () => {
    const old = (fields: Partial<RunForm>) => ({
      ...defaultForm(),
      workload: undefined as unknown as WorkloadMode,
      ...fields,
    });
    expect(workloadOf(old({ prompts: 'p.jsonl' }))).toBe('file');
    expect(workloadOf(old({ trace: 't.jsonl' }))).toBe('trace');
    expect(workloadOf(old({ prefixLen: '64' }))).toBe('shared-prefix');
    expect(workloadOf(old({ turns: '4' }))).toBe('multi-turn');
    expect(workloadOf(old({ turns: '1' }))).toBe('synthetic');
    expect(workloadOf({ ...defaultForm(), workload: 'bogus' as WorkloadMode })).toBe('synthetic');
  });

  it('finds the workload field a core refusal names, so the line shows beside the Workload section', () => {
    const config = BenchConfigSchema.parse({ prefixGroups: 4, prefixLen: 600, inputLen: [512] });
    expect(workloadErrorField(workloadProblem(config)!)).toBe('prefixLen');
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
