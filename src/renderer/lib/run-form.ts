import type { BenchConfigInput, EngineKind } from '../../shared/config.js';
import { ENGINE_DESCRIPTIONS, describeEngine, type EngineField } from '../../shared/engines.js';
import type { PresetSummary } from '../../shared/contract.js';

/** The app's engine picker: the registry's list, in its order. */
export const ENGINE_PICKER: ReadonlyArray<{ id: EngineKind; name: string; hint: string }> = ENGINE_DESCRIPTIONS.map(
  (d) => ({ id: d.kind, name: d.name, hint: d.hint }),
);

/** The new-run form as the user edits it: strings, so empty means "default". */
export interface RunForm {
  label: string;
  engine: EngineKind;
  preset: string;
  model: string;
  url: string;
  quantization: string;
  dtype: string;
  maxSeqs: string;
  python: string;
  /** llamacpp: the llama-server binary. */
  binary: string;
  /** command: the server's command line ({port}, {host}, {model}). */
  command: string;
  healthPath: string;
  contextSize: string;
  gpuLayers: string;
  simProfile: string;
  diffusion: boolean;
  blockSize: string;
  threshold: string;
  concurrency: string;
  inputLen: string;
  outputLen: string;
  rounds: string;
  requestsPerRound: string;
  warmup: string;
  gpuPricePerHour: string;
  utilizationPct: string;
}

/** A preset's server fields (as written in the preset file, before defaults). */
export type PresetServer = NonNullable<PresetSummary['server']>;

export function defaultForm(): RunForm {
  return {
    label: 'run',
    engine: 'sim',
    preset: '',
    model: '',
    url: '',
    quantization: '',
    dtype: '',
    maxSeqs: '',
    python: '',
    binary: '',
    command: '',
    healthPath: '',
    contextSize: '',
    gpuLayers: '',
    simProfile: '',
    diffusion: false,
    blockSize: '32',
    threshold: '0.95',
    concurrency: '1,2,4,8,16',
    inputLen: '512',
    outputLen: '256',
    rounds: '3',
    requestsPerRound: '',
    warmup: '',
    gpuPricePerHour: '',
    utilizationPct: '',
  };
}

export type BuildResult = { ok: true; config: BenchConfigInput } | { ok: false; field: keyof RunForm; error: string };

function num(raw: string): number | undefined {
  const t = raw.trim();
  if (t === '') return undefined;
  return Number(t);
}

/** A comma list of numbers: `1, 2,4` -> [1,2,4]; NaN entries are kept so the service names them. */
export function parseList(raw: string): number[] {
  return raw
    .split(/[\s,]+/)
    .filter((s) => s !== '')
    .map(Number);
}

/**
 * The form as a run config. Only what cannot be sent is refused here (text where a number belongs);
 * ranges and the rest are the service's to judge, so its one-line error is the one the user sees.
 */
export function buildConfig(form: RunForm, presetServer: PresetServer = {}): BuildResult {
  const numbers: Array<[keyof RunForm, string]> = [
    ['inputLen', 'input length'],
    ['outputLen', 'output length'],
    ['rounds', 'rounds'],
    ['requestsPerRound', 'requests per round'],
    ['warmup', 'warm-up'],
    ['gpuPricePerHour', 'GPU price'],
    ['utilizationPct', 'utilization'],
    ['maxSeqs', 'max seqs'],
    ['blockSize', 'block size'],
    ['threshold', 'threshold'],
    ['contextSize', 'context size'],
    ['gpuLayers', 'GPU layers'],
  ];
  for (const [field, name] of numbers) {
    const v = num(String(form[field]));
    if (v !== undefined && !Number.isFinite(v)) return { ok: false, field, error: `${name} must be a number` };
  }
  const concurrency = parseList(form.concurrency);
  if (concurrency.length === 0)
    return { ok: false, field: 'concurrency', error: 'give at least one concurrency, e.g. 1,4,16' };
  if (concurrency.some((c) => !Number.isFinite(c))) {
    return { ok: false, field: 'concurrency', error: 'concurrency is a list of numbers such as 1,2,4,8' };
  }
  const engine = form.engine;
  if (engine === 'attach' && form.url.trim() === '')
    return { ok: false, field: 'url', error: 'give the server URL to attach to' };
  const described = describeEngine(engine);
  const uses = (field: EngineField): boolean => described.fields.includes(field);
  if (described.requiresModel && form.model.trim() === '') {
    return { ok: false, field: 'model', error: `give the model ${described.name} should serve` };
  }
  if (uses('command') && form.command.trim() === '')
    return { ok: false, field: 'command', error: 'give the command line that starts the server' };

  // The preset is the base (it may carry settings the form has no field for, such as extra arguments);
  // every field the form shows is the form's to set or clear.
  const server: Record<string, unknown> = { ...presetServer, engine };
  const shown = ['model', 'url', 'quantization', 'dtype', 'maxSeqs', 'python', 'simProfile', 'diffusion'];
  for (const key of [...shown, 'llamaServer', 'command', 'healthPath', 'contextSize', 'gpuLayers']) delete server[key];
  const text = (v: string): string | undefined => (v.trim() === '' ? undefined : v.trim());
  const set = (key: string, v: unknown): void => {
    if (v !== undefined) server[key] = v;
  };
  set('model', text(form.model));
  if (uses('url')) set('url', text(form.url));
  if (uses('quantization')) set('quantization', text(form.quantization));
  if (uses('dtype')) set('dtype', text(form.dtype));
  if (uses('maxSeqs')) set('maxSeqs', num(form.maxSeqs));
  if (uses('python')) set('python', text(form.python));
  if (uses('binary')) set('llamaServer', text(form.binary));
  if (uses('contextSize')) set('contextSize', num(form.contextSize));
  if (uses('gpuLayers')) set('gpuLayers', num(form.gpuLayers));
  if (uses('command')) set('command', splitWords(form.command));
  if (uses('healthPath')) set('healthPath', text(form.healthPath));
  if (uses('simProfile')) set('simProfile', text(form.simProfile));
  if (form.diffusion && uses('diffusion')) {
    const base = presetServer.diffusion ?? {};
    server.diffusion = { ...base, blockSize: num(form.blockSize) ?? 32, threshold: num(form.threshold) ?? 0.95 };
  }

  const config: Record<string, unknown> = {
    label: text(form.label) ?? 'run',
    concurrency,
    inputLen: [num(form.inputLen) ?? 512],
    outputLen: [num(form.outputLen) ?? 256],
    rounds: num(form.rounds) ?? 3,
    server,
  };
  const optional: Array<[string, number | undefined]> = [
    ['requestsPerRound', num(form.requestsPerRound)],
    ['warmup', num(form.warmup)],
    ['gpuPricePerHour', num(form.gpuPricePerHour)],
  ];
  for (const [k, v] of optional) if (v !== undefined) config[k] = v;
  const util = num(form.utilizationPct);
  if (util !== undefined) config.utilization = util / 100;
  return { ok: true, config: config as BenchConfigInput };
}

/** A command line as words (quotes group; the service spawns the argv, never a shell). */
export function splitWords(line: string): string[] | undefined {
  const words = [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
  return words.length > 0 ? words : undefined;
}

/** The form with a preset's server settings filled in (fields the preset leaves out are cleared). */
export function applyPreset(form: RunForm, preset: PresetSummary | undefined): RunForm {
  if (!preset) {
    // "None" clears what a preset filled in (server fields), and keeps the sweep the user typed.
    const d = defaultForm();
    return {
      ...form,
      preset: '',
      model: d.model,
      url: d.url,
      quantization: d.quantization,
      dtype: d.dtype,
      maxSeqs: d.maxSeqs,
      python: d.python,
      binary: d.binary,
      command: d.command,
      healthPath: d.healthPath,
      contextSize: d.contextSize,
      gpuLayers: d.gpuLayers,
      simProfile: d.simProfile,
      diffusion: d.diffusion,
      blockSize: d.blockSize,
      threshold: d.threshold,
    };
  }
  const s: PresetServer = preset.server ?? {};
  const str = (v: unknown): string => (v === undefined || v === null ? '' : String(v));
  const diffusion = s.diffusion;
  const engine: EngineKind = s.engine ?? form.engine;
  return {
    ...form,
    preset: preset.name,
    engine,
    model: str(s.model),
    url: str(s.url),
    quantization: str(s.quantization),
    dtype: str(s.dtype),
    maxSeqs: str(s.maxSeqs),
    python: str(s.python),
    binary: str(s.llamaServer),
    command: (s.command ?? []).map((w) => (/\s/.test(w) ? `"${w}"` : w)).join(' '),
    healthPath: str(s.healthPath),
    contextSize: str(s.contextSize),
    gpuLayers: str(s.gpuLayers),
    simProfile: str(s.simProfile),
    diffusion: diffusion !== undefined,
    blockSize: str(diffusion?.blockSize ?? 32),
    threshold: str(diffusion?.threshold ?? 0.95),
  };
}
