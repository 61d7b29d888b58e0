import type { BenchConfigInput, EngineKind } from '../../shared/config.js';
import { ENGINE_DESCRIPTIONS, modelProblem } from '../../shared/engines.js';
import {
  FIELDS,
  SWEEPABLE_FIELDS,
  fieldApplies,
  isServerField,
  type Field,
  type FieldDescriptor,
} from '../../shared/fields.js';
import {
  describeVariant,
  durationMs,
  expandVary,
  fieldDefault,
  fieldText,
  getPath,
  plainNumber,
  setPath,
} from '../../shared/field-values.js';
import { splitCommandLine } from '../../shared/command-line.js';
import { ENGINE_WHERE_FIELDS } from '../../shared/contract.js';
import type { EngineProbeRequest, PresetSummary } from '../../shared/contract.js';

/** The app's engine picker: the registry's list, in its order. */
export const ENGINE_PICKER: ReadonlyArray<{ id: EngineKind; name: string; hint: string }> = ENGINE_DESCRIPTIONS.map(
  (d) => ({ id: d.kind, name: d.name, hint: d.hint }),
);

/** A field the form edits as text (every field but the cli-only ones, the engine picker and the env rows). */
type TextField = Exclude<Field, { ui: 'cli-only' | 'engine' | 'env' }>;
/** The form's key of a text field. */
export type FormFieldName = TextField['name'];

/** The fields the form shows as inputs, in table order. */
export const FORM_FIELDS: readonly FieldDescriptor[] = FIELDS.filter(
  (f) => f.ui !== 'cli-only' && f.ui !== 'engine' && f.ui !== 'env',
);

/** What the run's prompts are made of: the New-run form's Workload choice. */
export type WorkloadMode = 'synthetic' | 'file' | 'shared-prefix' | 'multi-turn' | 'trace';

/** One workload of the form: its name, what it does in a line or two, and its own fields (the others stay empty). */
export interface WorkloadChoice {
  id: WorkloadMode;
  name: string;
  hint: string;
  fields: readonly FormFieldName[];
  /** The fields a run of this workload cannot go without. */
  required: readonly FormFieldName[];
}

/** The Workload choice, in the form's order (docs/workloads.md, docs/multi-turn.md). */
export const WORKLOADS: readonly WorkloadChoice[] = [
  {
    id: 'synthetic',
    name: 'Fixed lengths',
    hint:
      'Every request is a synthetic prompt of exactly Input tokens (with a unique start, so no request ' +
      'rides on another in the prefix cache) and asks exactly Output tokens: the clean case, comparable ' +
      'from run to run.',
    fields: [],
    required: [],
  },
  {
    id: 'file',
    name: 'Prompt file',
    hint:
      'Prompts from a JSONL file ({"prompt"} or {"messages"} lines, optional "output_len") or ShareGPT JSON, ' +
      "in file order, wrapping round when the run needs more. Each prompt is fitted to Input tokens with the server's " +
      "tokenizer, and the output length stays fixed at Output tokens, unless 'lengths from file'.",
    fields: ['prompts', 'promptLengths', 'outputLengths'],
    required: ['prompts'],
  },
  {
    id: 'shared-prefix',
    name: 'Shared prefix',
    hint:
      "Request i joins group i mod N; a group's requests share a system prompt of P tokens, then a unique part, " +
      'Input tokens in all (P must be shorter). The prefix cache is used on purpose: each level gets its ' +
      'cache hit rate. Every request asks exactly Output tokens.',
    fields: ['prefixGroups', 'prefixLen'],
    required: ['prefixGroups', 'prefixLen'],
  },
  {
    id: 'multi-turn',
    name: 'Multi-turn',
    hint:
      'Conversations of K turns on the chat API, each turn sending the whole history back; each user message has ' +
      'Input tokens and each answer Output tokens. Concurrency counts conversations in flight; a Rate counts ' +
      'requests (turns), so conversations arrive at Rate / K per second. Requests per round and warm-up count ' +
      'turns, rounded up to whole conversations.',
    fields: ['turns', 'thinkTimeMs'],
    required: ['turns'],
  },
  {
    id: 'trace',
    name: 'Trace replay',
    hint:
      "One open-loop level at a Mooncake trace's own arrival times and lengths (JSONL: timestamp ms, input_length, " +
      'output_length, hash_ids): Concurrency, Rate, Input and Output tokens are not used; Max concurrency ' +
      '(More load settings) caps requests in flight. No warm-up unless you set one.',
    fields: ['trace', 'traceSpeed'],
    required: ['trace'],
  },
];

/** The Sweep fields a workload takes from elsewhere (a trace: arrivals and lengths), shown disabled and never sent. */
const FROM_WORKLOAD: Partial<Record<WorkloadMode, { fields: readonly FormFieldName[]; note: string }>> = {
  trace: { fields: ['concurrency', 'rate', 'inputLen', 'outputLen'], note: 'from the trace' },
};

/** The Sweep fields the workload does not use, and the note that says where their values come from. */
export function unusedSweepFields(mode: WorkloadMode): { fields: readonly FormFieldName[]; note: string } {
  return FROM_WORKLOAD[mode] ?? { fields: [], note: '' };
}

/** Every field that belongs to one workload (shown only in the Workload section, sent only for its workload). */
export const WORKLOAD_FIELDS: readonly FormFieldName[] = WORKLOADS.flatMap((w) => w.fields);

/** The workload the form shows: its choice, else (a form saved before the choice existed) what its fields say. */
export function workloadOf(
  form: Pick<RunForm, 'workload' | 'prompts' | 'trace' | 'prefixGroups' | 'prefixLen' | 'turns'>,
): WorkloadMode {
  if (WORKLOADS.some((w) => w.id === form.workload)) return form.workload;
  if (form.prompts.trim() !== '') return 'file';
  if (form.trace.trim() !== '') return 'trace';
  if (form.prefixGroups.trim() !== '' || form.prefixLen.trim() !== '') return 'shared-prefix';
  return Number(form.turns) > 1 ? 'multi-turn' : 'synthetic';
}

/** The form switched to a workload: the fields of every other workload cleared, so no two are ever combined. */
export function chooseWorkload(form: RunForm, mode: WorkloadMode): RunForm {
  const keep = WORKLOADS.find((w) => w.id === mode)?.fields ?? [];
  const next: RunForm = { ...form, workload: mode };
  for (const name of WORKLOAD_FIELDS) if (!keep.includes(name)) next[name] = '';
  return next;
}

/** The workload field a core refusal names (`--prefix-len 600 must be shorter…`, `invalid setting 'turns'`), if any. */
export function workloadErrorField(message: string): FormFieldName | undefined {
  const byFlag = new Map(
    FORM_FIELDS.filter((f) => WORKLOAD_FIELDS.includes(f.name as FormFieldName)).map((f) => [f.flag, f.name]),
  );
  const setting = /^invalid setting '([A-Za-z]+)'/.exec(message)?.[1];
  if (setting && WORKLOAD_FIELDS.includes(setting as FormFieldName)) return setting as FormFieldName;
  for (const m of message.matchAll(/--([a-z][a-z-]*)/g)) {
    const name = byFlag.get(m[1] as string);
    if (name) return name as FormFieldName;
  }
  return undefined;
}

/** One environment variable of the server. */
export interface EnvRow {
  name: string;
  value: string;
}

/** One server sweep: a --vary key and its values as typed (`1,2`). */
export interface VaryRow {
  key: string;
  values: string;
}

/** The new-run form as the user edits it: strings, so empty means "default"; toggles are '', 'on' or 'off'. */
export type RunForm = Record<FormFieldName, string> & {
  engine: EngineKind;
  preset: string;
  workload: WorkloadMode;
  /** The diffusion fields are shown and sent. */
  diffusion: boolean;
  env: EnvRow[];
  vary: VaryRow[];
};

/** A key of the form that can carry an error. */
export type FormKey = keyof RunForm;

/** A preset's server fields (as written in the preset file, before defaults). */
export type PresetServer = NonNullable<PresetSummary['server']>;

/** A config value as the form shows it; a prefilled field shows the schema's default when the value is absent. */
function toText(f: FieldDescriptor, v: unknown): string {
  return fieldText(f, v ?? (f.prefill ? fieldDefault(f) : undefined));
}

export function defaultForm(): RunForm {
  const form: Record<string, unknown> = {
    engine: 'sim',
    preset: '',
    workload: 'synthetic',
    diffusion: false,
    env: [],
    vary: [],
  };
  for (const f of FORM_FIELDS) form[f.name] = f.prefill ? toText(f, undefined) : '';
  return form as RunForm;
}

/** A comma list of numbers: `1, 2,4` -> [1,2,4]; entries not written plainly are NaN. */
export function parseList(raw: string, integer = true): number[] {
  return raw
    .split(/[\s,]+/)
    .filter((s) => s !== '')
    .map((s) => plainNumber(s, integer));
}

type Read = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * A form field's value (undefined when empty). Only what cannot be sent is refused here (text where a
 * number belongs); ranges are the service's to judge, so its one-line error is the one the user sees.
 */
function readField(f: FieldDescriptor, raw: string): Read {
  const t = raw.trim();
  if (t === '') return { ok: true, value: undefined };
  const integer = f.type === 'int' || f.type === 'int-list';
  switch (f.ui) {
    case 'list': {
      const list = parseList(t, integer);
      return list.some((n) => !Number.isFinite(n))
        ? { ok: false, error: `${f.label} is a list of ${integer ? 'whole ' : ''}numbers such as 1,2,4,8` }
        : { ok: true, value: list };
    }
    case 'number':
    case 'percent': {
      const n = plainNumber(t, integer);
      if (!Number.isFinite(n)) return { ok: false, error: `${f.label} must be a ${integer ? 'whole ' : ''}number` };
      if (f.ui === 'percent') return { ok: true, value: n / 100 };
      return { ok: true, value: f.type === 'seconds' ? Math.round(n * 1000) : n };
    }
    case 'toggle':
      return { ok: true, value: t === 'on' };
    case 'args':
      try {
        return { ok: true, value: splitCommandLine(t) };
      } catch (e) {
        return { ok: false, error: `${f.label}: ${(e as Error).message}` };
      }
    default:
      if (f.type === 'command') return readField({ ...f, ui: 'args' }, t);
      if (f.type === 'duration') {
        const ms = durationMs(t);
        return ms === undefined
          ? { ok: false, error: `${f.label} is a duration such as 600, 90s, 20m or 1h` }
          : { ok: true, value: ms };
      }
      return { ok: true, value: t };
  }
}

/** Whether the form shows a field for the chosen engine (diffusion fields only with the diffusion box ticked). */
export function shows(form: Pick<RunForm, 'engine' | 'diffusion'>, f: FieldDescriptor): boolean {
  if (!isServerField(f)) return true;
  if (!fieldApplies(f, form.engine)) return false;
  return f.group !== 'diffusion' || form.diffusion;
}

/** The field the engine's look-up is shown beside (Python or llama-server), or undefined when none shows. */
export function probeField(
  form: Pick<RunForm, 'engine' | 'diffusion'>,
): (typeof ENGINE_WHERE_FIELDS)[number] | undefined {
  return ENGINE_WHERE_FIELDS.find((name) => FORM_FIELDS.some((f) => f.name === name && shows(form, f)));
}

/** What the form asks probeEngine: the engine and its shown Python / binary field; null when nothing is launched. */
export function probeRequest(
  form: Pick<RunForm, 'engine' | 'diffusion' | (typeof ENGINE_WHERE_FIELDS)[number]>,
): EngineProbeRequest | null {
  if (form.engine === 'attach') return null;
  const request: EngineProbeRequest = { engine: form.engine };
  const name = probeField(form);
  const value = name === undefined ? '' : form[name].trim();
  if (name !== undefined && value !== '') request[name] = value;
  return request;
}

/** The --vary keys offered for an engine. */
export function varyKeys(engine: EngineKind): FieldDescriptor[] {
  return SWEEPABLE_FIELDS.filter((f) => fieldApplies(f, engine));
}

/** The sweeps the form sends: rows with values, of settings the chosen engine has (others wait, hidden, like its fields). */
export function varyRows(form: Pick<RunForm, 'engine' | 'vary'>): VaryRow[] {
  const offered = varyKeys(form.engine).map((f) => f.flag);
  return form.vary.filter((r) => offered.includes(r.key));
}

function varySpecs(form: Pick<RunForm, 'engine' | 'vary'>): Array<{ key: string; values: string[] }> {
  return varyRows(form)
    .filter((r) => r.values.trim() !== '')
    .map((r) => ({ key: r.key, values: r.values.split(/[\s,]+/) }));
}

/** The server setups a form's sweeps make, each in words (`tp=2 · gpu-memory=0.8`), or what is wrong. */
export function varyLevels(
  form: Pick<RunForm, 'engine' | 'vary'>,
): { ok: true; labels: string[] } | { ok: false; error: string } {
  const specs = varySpecs(form);
  if (specs.length === 0) return { ok: true, labels: [] };
  const out = expandVary(specs);
  return out.ok
    ? { ok: true, labels: out.variants.map(describeVariant) }
    : { ok: false, error: `server sweep: ${out.error}` };
}

/** What to give when a workload's required field is empty, in one line. */
const WORKLOAD_MISSING: Partial<Record<FormFieldName, string>> = {
  prompts: "give the prompt file's path (JSONL or ShareGPT JSON, on the machine running servebench)",
  trace: "give the trace file's path (Mooncake JSONL, on the machine running servebench)",
  prefixGroups: 'give the number of prefix groups, e.g. 4',
  prefixLen: 'give the shared prefix length in tokens, fewer than Input tokens, e.g. 384',
  turns: 'give the turns per conversation: 2 or more, e.g. 3',
};

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export type BuildResult = { ok: true; config: BenchConfigInput } | { ok: false; field: FormKey; error: string };

/** The form as a run config, over the chosen preset's server settings (which may hold more than the form shows). */
export function buildConfig(form: RunForm, presetServer: PresetServer = {}): BuildResult {
  const engine = form.engine;
  const config: Record<string, unknown> = {};
  const server: Record<string, unknown> = { ...presetServer, engine };
  // Every server setting the form can show is the form's to set or clear.
  for (const f of FORM_FIELDS) if (isServerField(f)) delete server[f.path.split('.')[1] as string];
  delete server.env;
  delete server.simArgs;
  const workload = WORKLOADS.find((w) => w.id === workloadOf(form)) as WorkloadChoice;
  const unused = unusedSweepFields(workload.id).fields;

  for (const f of FORM_FIELDS) {
    if (!shows(form, f)) continue;
    // Only the chosen workload's fields are sent: the core refuses two workloads in one run.
    const name = f.name as FormFieldName;
    if (WORKLOAD_FIELDS.includes(name) && !workload.fields.includes(name)) continue;
    // The trace brings its arrival times and lengths: the sweep's (disabled, maybe left invalid) are not read.
    if (unused.includes(name)) continue;
    const read = readField(f, form[f.name as FormFieldName]);
    if (!read.ok) return { ok: false, field: f.name as FormKey, error: read.error };
    if (read.value === undefined) continue;
    if (isServerField(f)) {
      const key = f.name === 'extraArgs' && engine === 'sim' ? 'simArgs' : f.path.slice('server.'.length);
      if (f.group === 'diffusion')
        server.diffusion = { ...(presetServer.diffusion ?? {}), ...(server.diffusion ?? {}) };
      setPath(server, key, read.value);
    } else {
      setPath(config, f.path, read.value);
    }
  }

  for (const name of workload.required) {
    if (form[name].trim() === '') return { ok: false, field: name, error: WORKLOAD_MISSING[name] ?? `fill in ${name}` };
  }
  if (workload.id === 'multi-turn' && config.turns === 1)
    return { ok: false, field: 'turns', error: WORKLOAD_MISSING.turns ?? '' };

  const rateGiven = config.rate !== undefined;
  if (workload.id !== 'trace' && !rateGiven && config.concurrency === undefined)
    return { ok: false, field: 'concurrency', error: 'give at least one concurrency, e.g. 1,4,16' };
  if (rateGiven) delete config.concurrency;
  if (engine === 'attach' && server.url === undefined)
    return { ok: false, field: 'url', error: 'give the server URL to attach to' };
  const noModel = modelProblem(engine, server.model as string | undefined);
  if (noModel) return { ok: false, field: 'model', error: noModel };
  if (engine === 'command' && server.command === undefined)
    return { ok: false, field: 'command', error: 'give the command line that starts the server' };

  const env: Record<string, string> = {};
  for (const row of form.env) {
    const name = row.name.trim();
    if (name === '' && row.value === '') continue;
    if (!ENV_NAME.test(name))
      return { ok: false, field: 'env', error: `environment names are letters, digits and _ (got '${name}')` };
    env[name] = row.value;
  }
  if (Object.keys(env).length > 0 && engine !== 'attach') server.env = env;

  const specs = varySpecs(form);
  if (specs.length > 0) {
    const out = expandVary(specs);
    if (!out.ok) return { ok: false, field: 'vary', error: `server sweep: ${out.error}` };
    config.serverVariants = out.variants;
  }

  config.label = config.label ?? 'run';
  config.server = server;
  return { ok: true, config: config as BenchConfigInput };
}

/** The form with a preset's server settings filled in (fields the preset leaves out are cleared). */
export function applyPreset(form: RunForm, preset: PresetSummary | undefined): RunForm {
  const s: Record<string, unknown> = preset?.server ?? {};
  const next: Record<string, unknown> = { ...form, preset: preset?.name ?? '' };
  const engine = (s.engine as EngineKind | undefined) ?? form.engine;
  for (const f of FORM_FIELDS) {
    if (!isServerField(f)) continue;
    const key = f.name === 'extraArgs' && engine === 'sim' ? 'simArgs' : f.path.slice('server.'.length);
    next[f.name] = toText(f, getPath(s, key));
  }
  next.engine = engine;
  next.diffusion = s.diffusion !== undefined;
  next.env = Object.entries((s.env as Record<string, string> | undefined) ?? {}).map(([name, value]) => ({
    name,
    value,
  }));
  // "None" clears what a preset filled in (server fields), and keeps the load and the sweeps the user typed.
  return next as RunForm;
}
