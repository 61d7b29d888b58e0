import { defaultForm, type RunForm } from '../../src/renderer/lib/run-form.js';

const EXTRAS = new Set(['engine', 'preset', 'workload', 'diffusion', 'env', 'vary', 'values']);

/** A new-run form over the defaults: the form's own keys (engine, env, ...) as they are, field texts by flag. */
export function formOf(typed: Record<string, unknown> = {}, base: RunForm = defaultForm()): RunForm {
  const form: RunForm = { ...base, values: { ...base.values } };
  for (const [key, value] of Object.entries(typed)) {
    if (EXTRAS.has(key)) (form as unknown as Record<string, unknown>)[key] = value;
    else form.values[key] = String(value);
  }
  return form;
}
