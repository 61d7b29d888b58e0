import type { FormValues } from '../../shared/settings.js';
import type { RunForm } from './run-form.js';

/**
 * The form from saved values over the defaults: only keys the form has, of the type it has there,
 * so values saved by another version of the app never break it.
 */
export function formFromSaved(defaults: RunForm, saved: FormValues | undefined): RunForm {
  const form: Record<string, unknown> = { ...defaults };
  for (const [key, value] of Object.entries(saved ?? {})) {
    if (!(key in defaults)) continue;
    const want = (defaults as Record<string, unknown>)[key];
    if (Array.isArray(want) ? Array.isArray(value) : typeof want === typeof value) form[key] = value;
  }
  return form as RunForm;
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
