import type { BenchConfig, EngineKind } from '../../shared/config.js';
import { SWEEPABLE_FIELDS } from '../../shared/fields.js';
import { getPath } from '../../shared/field-values.js';
import { REDACTED } from '../../shared/secret-names.js';
import { FORM_FIELDS, defaultForm, toText, workloadOf, type RunForm, type VaryRow } from './run-form.js';

/** Placeholders a record holds where a secret was (older records wrote '<redacted>'). */
const isRedacted = (v: unknown): boolean => v === REDACTED || v === '<redacted>';

/** The form filled from a run, as `servebench run --from RUN` takes it, and what the user must give again. */
export interface RunAgain {
  form: RunForm;
  /** One line each: a secret to give again (it is never recorded), a setting the form cannot hold. */
  notices: string[];
}

/** A recorded server sweep as the form's sweep rows: each swept key with the values it took, in order. */
function varyOf(variants: ReadonlyArray<Record<string, unknown>> | undefined): VaryRow[] {
  const rows: VaryRow[] = [];
  for (const f of SWEEPABLE_FIELDS) {
    const key = f.path.slice('server.'.length);
    const values = [...new Set((variants ?? []).map((v) => getPath(v, key)).filter((v) => v !== undefined))];
    if (values.length > 0) rows.push({ key: f.flag, values: values.map(String).join(',') });
  }
  return rows;
}

/** The new-run form filled from a recorded run's config: the same run again, secrets left for the user to give. */
export function formFromRun(config: BenchConfig): RunAgain {
  const notices: string[] = [];
  const base = defaultForm();
  const values = { ...base.values };
  for (const f of FORM_FIELDS) {
    const v = getPath(config as unknown as Record<string, unknown>, f.path);
    if (isRedacted(v)) notices.push(`${f.label}: its value is a secret and was not recorded; fill it in again`);
    else values[f.flag] = toText(f, v);
  }
  const env: RunForm['env'] = [];
  for (const [name, value] of Object.entries(config.server.env ?? {})) {
    // Left out, as run --from leaves it out: an empty value would be sent as one.
    if (isRedacted(value)) notices.push(`environment ${name}: a secret, not recorded; add it again with its value`);
    else env.push({ name, value });
  }
  const form: RunForm = {
    ...base,
    engine: config.server.engine as EngineKind,
    diffusion: config.server.diffusion !== undefined,
    values,
    env,
    vary: varyOf(config.serverVariants),
  };
  // The workload the recorded fields make (a file of prompts, a trace, shared prefixes, turns).
  return { form: { ...form, workload: workloadOf({ ...form, workload: '' as RunForm['workload'] }) }, notices };
}
