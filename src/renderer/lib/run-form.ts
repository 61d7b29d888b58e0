import type { BenchConfigInput, EngineKind } from '../../shared/config.js';
import { DEFAULT_ENGINE, ENGINE_FACTS, describeEngine, modelProblem } from '../../shared/engines.js';
import {
  FIELDS,
  SWEEPABLE_FIELDS,
  fieldApplies,
  fieldByFlag,
  isServerField,
  type FieldDescriptor,
} from '../../shared/fields.js';
import {
  checkValue,
  describeVariant,
  expandVary,
  fieldDefault,
  fieldText,
  getPath,
  parseFieldText,
  plainNumber,
  setPath,
} from '../../shared/field-values.js';
import { splitCommandLine } from '../../shared/command-line.js';
import { requestTokens } from '../../shared/request-tokens.js';
import type { EngineProbeRequest, PresetSummary } from '../../shared/contract.js';

/** The app's engine picker: the registry's list, in its order. */
export const ENGINE_PICKER: ReadonlyArray<{ id: EngineKind; name: string; hint: string }> = ENGINE_FACTS.map((d) => ({
  id: d.kind,
  name: d.name,
  hint: d.hint,
}));

/** The fields the form shows as inputs (all but the engine picker, the env rows and what the app sets elsewhere). */
export const FORM_FIELDS: readonly FieldDescriptor[] = FIELDS.filter(
  (f) => f.ui !== 'none' && f.ui !== 'engine' && f.ui !== 'env',
);

/** A field's key in the form: its flag, the one name of a setting. */
export type FormFieldName = string;

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
    fields: ['prompts', 'prompt-lengths', 'output-lengths'],
    required: ['prompts'],
  },
  {
    id: 'shared-prefix',
    name: 'Shared prefix',
    hint:
      "Request i joins group i mod N; a group's requests share a system prompt of P tokens, then a unique part, " +
      'Input tokens in all (P must be shorter). The prefix cache is used on purpose: each level gets its ' +
      'cache hit rate. Every request asks exactly Output tokens.',
    fields: ['prefix-groups', 'prefix-len'],
    required: ['prefix-groups', 'prefix-len'],
  },
  {
    id: 'multi-turn',
    name: 'Multi-turn',
    hint:
      'Conversations of K turns on the chat API, each turn sending the whole history back; each user message has ' +
      'Input tokens and each answer Output tokens. Concurrency counts conversations in flight; a Rate counts ' +
      'requests (turns), so conversations arrive at Rate / K per second. Requests per round and warm-up count ' +
      'turns, rounded up to whole conversations.',
    fields: ['turns', 'think-time-ms'],
    required: ['turns'],
  },
  {
    id: 'trace',
    name: 'Trace replay',
    hint:
      "One open-loop level at a Mooncake trace's own arrival times and lengths (JSONL: timestamp ms, input_length, " +
      'output_length, hash_ids): Concurrency, Rate, Input and Output tokens are not used; Max concurrency ' +
      '(More load settings) caps requests in flight. No warm-up unless you set one.',
    fields: ['trace', 'trace-speed'],
    required: ['trace'],
  },
];

/** The Sweep fields a workload takes from elsewhere (a trace: arrivals and lengths), shown disabled and never sent. */
const FROM_WORKLOAD: Partial<Record<WorkloadMode, { fields: readonly FormFieldName[]; note: string }>> = {
  trace: { fields: ['concurrency', 'rate', 'input-len', 'output-len'], note: 'from the trace' },
};

/** The Sweep fields the workload does not use, and the note that says where their values come from. */
export function unusedSweepFields(mode: WorkloadMode): { fields: readonly FormFieldName[]; note: string } {
  return FROM_WORKLOAD[mode] ?? { fields: [], note: '' };
}

/** Every field that belongs to one workload (shown only in the Workload section, sent only for its workload). */
export const WORKLOAD_FIELDS: readonly FormFieldName[] = WORKLOADS.flatMap((w) => w.fields);

/** One environment variable of the server. */
interface EnvRow {
  name: string;
  value: string;
}

/** One server sweep: a --vary key and its values as typed (`1,2`). */
export interface VaryRow {
  key: string;
  values: string;
}

/** The new-run form as the user edits it: each field's text under its flag (empty means "default"). */
export interface RunForm {
  engine: EngineKind;
  preset: string;
  workload: WorkloadMode;
  /** The diffusion fields are shown and sent. */
  diffusion: boolean;
  /** Field texts by flag; toggles are '', 'on' or 'off'. */
  values: Record<FormFieldName, string>;
  env: EnvRow[];
  vary: VaryRow[];
}

/** A key of the form that can carry an error: a field's flag, or env / vary. */
export type FormKey = FormFieldName;

const text = (form: Pick<RunForm, 'values'>, flag: FormFieldName): string => form.values[flag] ?? '';

/** The workload the form shows: its choice, else (a form saved before the choice existed) what its fields say. */
export function workloadOf(form: Pick<RunForm, 'workload' | 'values'>): WorkloadMode {
  if (WORKLOADS.some((w) => w.id === form.workload)) return form.workload;
  if (text(form, 'prompts').trim() !== '') return 'file';
  if (text(form, 'trace').trim() !== '') return 'trace';
  if (text(form, 'prefix-groups').trim() !== '' || text(form, 'prefix-len').trim() !== '') return 'shared-prefix';
  return Number(text(form, 'turns')) > 1 ? 'multi-turn' : 'synthetic';
}

/** The form switched to a workload: the fields of every other workload cleared, so no two are ever combined. */
export function chooseWorkload(form: RunForm, mode: WorkloadMode): RunForm {
  const keep = WORKLOADS.find((w) => w.id === mode)?.fields ?? [];
  const values = { ...form.values };
  for (const flag of WORKLOAD_FIELDS) if (!keep.includes(flag)) values[flag] = '';
  return { ...form, workload: mode, values };
}

/** The workload field a core refusal names (`--prefix-len 600 must be shorter…`, `invalid setting 'turns'`), if any. */
export function workloadErrorField(message: string): FormFieldName | undefined {
  const setting = /^invalid setting '([A-Za-z.]+)'/.exec(message)?.[1];
  const byPath = setting ? FORM_FIELDS.find((f) => f.path === setting)?.flag : undefined;
  if (byPath && WORKLOAD_FIELDS.includes(byPath)) return byPath;
  for (const m of message.matchAll(/--([a-z][a-z-]*)/g)) {
    if (WORKLOAD_FIELDS.includes(m[1] as string)) return m[1];
  }
  return undefined;
}

/** A preset's server fields (as written in the preset file, before defaults). */
export type PresetServer = NonNullable<PresetSummary['server']>;

/** A config value as the form shows it; a prefilled field shows the schema's default when the value is absent. */
export function toText(f: FieldDescriptor, v: unknown): string {
  return fieldText(f, v ?? (f.prefill ? fieldDefault(f) : undefined));
}

export function defaultForm(): RunForm {
  const values: Record<string, string> = {};
  for (const f of FORM_FIELDS) values[f.flag] = f.prefill ? toText(f, undefined) : '';
  return { engine: DEFAULT_ENGINE, preset: '', workload: 'synthetic', diffusion: false, values, env: [], vary: [] };
}

/** A comma list of numbers: `1, 2,4` -> [1,2,4]; entries not written plainly are NaN. */
export function parseList(raw: string, integer = true): number[] {
  return raw
    .split(/[\s,]+/)
    .filter((s) => s !== '')
    .map((s) => plainNumber(s, integer));
}

type Read = { ok: true; value: unknown } | { ok: false; error: string };

/** A form field's value (undefined when empty), read and checked as its flag is: the same words, named by label. */
function readField(f: FieldDescriptor, raw: string): Read {
  const t = raw.trim();
  if (t === '') return { ok: true, value: undefined };
  const named = (r: Read): Read => (r.ok ? r : { ok: false, error: `${f.label} ${r.error}` });
  switch (f.ui) {
    case 'toggle':
      return { ok: true, value: t === 'on' };
    case 'percent': {
      const n = plainNumber(t, false);
      if (!Number.isFinite(n)) return { ok: false, error: `${f.label} must be a percentage such as 60` };
      return named(checkValue(f, n / 100, t));
    }
    case 'list':
      // The form takes spaces between values too.
      return named(
        parseFieldText(
          f,
          t
            .split(/[\s,]+/)
            .filter(Boolean)
            .join(','),
        ),
      );
    case 'args':
      return splitArgs(f, t);
    default:
      return f.type === 'command' ? splitArgs(f, t) : named(parseFieldText(f, t));
  }
}

function splitArgs(f: FieldDescriptor, t: string): Read {
  try {
    return { ok: true, value: splitCommandLine(t) };
  } catch (e) {
    return { ok: false, error: `${f.label}: ${(e as Error).message}` };
  }
}

/** Whether the form shows a field for the chosen engine (diffusion fields only with the diffusion box ticked). */
export function shows(form: Pick<RunForm, 'engine' | 'diffusion'>, f: FieldDescriptor): boolean {
  if (!isServerField(f)) return true;
  if (!fieldApplies(f, form.engine)) return false;
  return f.group !== 'diffusion' || form.diffusion;
}

/** The field the engine's look-up is shown beside (its interpreter or binary), or undefined when none shows. */
export function probeField(form: Pick<RunForm, 'engine' | 'diffusion'>): FieldDescriptor | undefined {
  const key = describeEngine(form.engine).probeSetting;
  return FORM_FIELDS.find((f) => f.path === `server.${key}` && shows(form, f));
}

/** What the form asks probeEngine: the engine and where it is (its probe field); null when nothing is launched. */
export function probeRequest(form: Pick<RunForm, 'engine' | 'diffusion' | 'values'>): EngineProbeRequest | null {
  if (!describeEngine(form.engine).launches) return null;
  const request: EngineProbeRequest = { engine: form.engine };
  const f = probeField(form);
  const where = f ? text(form, f.flag).trim() : '';
  if (where !== '') request.where = where;
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
  const out = expandVary(specs, varyKeys(form.engine));
  return out.ok
    ? { ok: true, labels: out.variants.map(describeVariant) }
    : { ok: false, error: `server sweep: ${out.error}` };
}

/** What to give when a workload's required field is empty, in one line. */
const WORKLOAD_MISSING: Partial<Record<FormFieldName, string>> = {
  prompts: "give the prompt file's path (JSONL or ShareGPT JSON, on the machine running servebench)",
  trace: "give the trace file's path (Mooncake JSONL, on the machine running servebench)",
  'prefix-groups': 'give the number of prefix groups, e.g. 4',
  'prefix-len': 'give the shared prefix length in tokens, fewer than Input tokens, e.g. 384',
  turns: 'give the turns per conversation: 2 or more, e.g. 3',
};

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export type BuildResult = { ok: true; config: BenchConfigInput } | { ok: false; field: FormKey; error: string };

/** The form's fields laid into the config and its server section; the first that cannot be read, if any. */
function readFields(
  form: RunForm,
  config: Record<string, unknown>,
  server: Record<string, unknown>,
  presetServer: PresetServer,
): { field: FormKey; error: string } | undefined {
  const workload = WORKLOADS.find((w) => w.id === workloadOf(form)) as WorkloadChoice;
  const unused = unusedSweepFields(workload.id).fields;
  for (const f of FORM_FIELDS) {
    if (!shows(form, f)) continue;
    // Only the chosen workload's fields are sent: the core refuses two workloads in one run.
    if (WORKLOAD_FIELDS.includes(f.flag) && !workload.fields.includes(f.flag)) continue;
    // The trace brings its arrival times and lengths: the sweep's (disabled, maybe left invalid) are not read.
    if (unused.includes(f.flag)) continue;
    const read = readField(f, text(form, f.flag));
    if (!read.ok) return { field: f.flag, error: read.error };
    if (read.value === undefined) continue;
    if (isServerField(f)) {
      const key = f.path.slice('server.'.length);
      if (f.group === 'diffusion')
        server.diffusion = { ...(presetServer.diffusion ?? {}), ...((server.diffusion as object | undefined) ?? {}) };
      setPath(server, key, read.value);
    } else setPath(config, f.path, read.value);
  }
  return undefined;
}

/** What the form still lacks for its workload and its engine, in one line with the field to point at. */
function missing(form: RunForm, config: Record<string, unknown>, server: Record<string, unknown>) {
  const workload = WORKLOADS.find((w) => w.id === workloadOf(form)) as WorkloadChoice;
  for (const flag of workload.required) {
    if (text(form, flag).trim() === '') return { field: flag, error: WORKLOAD_MISSING[flag] ?? `fill in ${flag}` };
  }
  if (workload.id === 'multi-turn' && config.turns === 1)
    return { field: 'turns', error: WORKLOAD_MISSING.turns ?? '' };
  if (workload.id !== 'trace' && config.rate === undefined && config.concurrency === undefined)
    return { field: 'concurrency', error: 'give at least one concurrency, e.g. 1,4,16' };
  const engine = describeEngine(form.engine);
  for (const key of engine.required) {
    const f = FORM_FIELDS.find((x) => x.path === `server.${key}`);
    if (f && server[key] === undefined)
      return {
        field: f.flag,
        error: `${engine.name} needs ${f.label}${f.placeholder ? `, e.g. ${f.placeholder}` : ''}`,
      };
  }
  const noModel = modelProblem(form.engine, server.model as string | undefined);
  if (noModel) return { field: 'model', error: noModel };
  return overContext(form, config, server);
}

/**
 * A request longer than the context the form gives the server (Max model length) can never be served: refused
 * before launch, counted as the run's own check counts it once the server says its context (requestTokens).
 */
function overContext(form: RunForm, config: Record<string, unknown>, server: Record<string, unknown>) {
  const context = server.maxModelLen;
  if (typeof context !== 'number' || workloadOf(form) === 'trace') return undefined;
  // The longest length asked, the schema's default when the field is left empty.
  const longest = (key: string, flag: string): number => {
    const f = fieldByFlag(flag);
    const v = config[key] ?? (f ? fieldDefault(f) : undefined);
    return Array.isArray(v) ? Math.max(0, ...v.map(Number)) : 0;
  };
  const turns = typeof config.turns === 'number' ? config.turns : 1;
  const total = requestTokens(longest('inputLen', 'input-len'), longest('outputLen', 'output-len'), turns);
  if (total <= context) return undefined;
  const label = (flag: string): string => fieldByFlag(flag)?.label ?? flag;
  return {
    field: 'output-len',
    error: `${turns > 1 ? `${label('turns')} × (` : ''}${label('input-len')} + ${label('output-len')}${turns > 1 ? ')' : ''} (${total}) is over ${label('max-model-len')} (${context}): lower one, or raise ${label('max-model-len')}`,
  };
}

/** The form's environment rows as the server's environment, or the row that is wrong. */
function envOf(form: RunForm): { ok: true; env: Record<string, string> } | { ok: false; error: string } {
  const env: Record<string, string> = {};
  for (const row of form.env) {
    const name = row.name.trim();
    if (name === '' && row.value === '') continue;
    if (!ENV_NAME.test(name))
      return { ok: false, error: `environment names are letters, digits and _ (got '${name}')` };
    env[name] = row.value;
  }
  return { ok: true, env };
}

/** The form as a run config, over the chosen preset's server settings (which may hold more than the form shows). */
export function buildConfig(form: RunForm, presetServer: PresetServer = {}): BuildResult {
  const config: Record<string, unknown> = {};
  const server: Record<string, unknown> = { ...presetServer, engine: form.engine };
  // Every server setting the form can show is the form's to set or clear.
  for (const f of FORM_FIELDS) if (isServerField(f)) delete server[f.path.split('.')[1] as string];
  delete server.env;
  const bad = readFields(form, config, server, presetServer) ?? missing(form, config, server);
  if (bad) return { ok: false, ...bad };
  if (config.rate !== undefined) delete config.concurrency;

  const env = envOf(form);
  if (!env.ok) return { ok: false, field: 'env', error: env.error };
  if (Object.keys(env.env).length > 0 && describeEngine(form.engine).launches) server.env = env.env;

  const specs = varySpecs(form);
  if (specs.length > 0) {
    const out = expandVary(specs, varyKeys(form.engine));
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
  const values = { ...form.values };
  for (const f of FORM_FIELDS)
    if (isServerField(f)) values[f.flag] = toText(f, getPath(s, f.path.slice('server.'.length)));
  // "None" clears what a preset filled in (server fields), and keeps the load and the sweeps the user typed.
  return {
    ...form,
    preset: preset?.name ?? '',
    engine: (s.engine as EngineKind | undefined) ?? form.engine,
    diffusion: s.diffusion !== undefined,
    values,
    env: Object.entries((s.env as Record<string, string> | undefined) ?? {}).map(([name, value]) => ({ name, value })),
  };
}

/**
 * The form switched to another engine: the settings bound to the old one (its URL, command, profile, arguments)
 * are cleared, and so is the model when the two engines name models otherwise (a simulated name, a .gguf file,
 * a hub id): a value the new engine would take wrongly is never carried over.
 */
export function switchEngine(form: RunForm, next: EngineKind): RunForm {
  if (next === form.engine) return form;
  const values = { ...form.values };
  for (const f of FORM_FIELDS) if (f.engineBound && isServerField(f)) values[f.flag] = '';
  if (describeEngine(form.engine).modelHint !== describeEngine(next).modelHint)
    for (const flag of ['model', 'served-model-name']) values[flag] = '';
  return { ...form, engine: next, preset: '', values };
}
