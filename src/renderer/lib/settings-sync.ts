import type { FormValues } from '../../shared/settings.js';
import { kebab } from '../../shared/setting.js';
import { FORM_FIELDS, type RunForm } from './run-form.js';

/** The keys a saved form keeps beside its fields' texts (which it keeps under their flags). */
const EXTRAS = ['engine', 'preset', 'workload', 'diffusion', 'env', 'vary'] as const;

/** The form as the settings keep it: one flat record, each field's text under its flag. */
export function formToSaved(form: RunForm): FormValues {
  const out: FormValues = { ...form.values };
  for (const key of EXTRAS) out[key] = form[key] as FormValues[string];
  return out;
}

/** A field's flag for a key an earlier version saved under the config key's name (`maxSeqs`, `startTimeout`). */
function flagOfSaved(key: string): string | undefined {
  const f = FORM_FIELDS.find((x) => x.flag === key || x.flag === kebab(key) || x.path.split('.').pop() === key);
  return f?.flag;
}

/**
 * The form from saved values over the defaults: only keys the form has, of the type it has there,
 * so values saved by another version of the app never break it.
 */
export function formFromSaved(defaults: RunForm, saved: FormValues | undefined): RunForm {
  const form: RunForm = { ...defaults, values: { ...defaults.values } };
  for (const [key, value] of Object.entries(saved ?? {})) {
    if ((EXTRAS as readonly string[]).includes(key)) {
      const want = (defaults as unknown as Record<string, unknown>)[key];
      if (Array.isArray(want) ? Array.isArray(value) : typeof want === typeof value)
        (form as unknown as Record<string, unknown>)[key] = value;
      continue;
    }
    const flag = flagOfSaved(key);
    if (flag !== undefined && typeof value === 'string') form.values[flag] = value;
  }
  return form;
}

/** Saves the latest value `delayMs` after the last change (typing saves once, not per key). */
export function debounced<T>(save: (value: T) => Promise<void>, delayMs: number): (value: T) => void {
  let timer: ReturnType<typeof setTimeout> | null = null;
  return (value) => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      void save(value);
    }, delayMs);
  };
}
