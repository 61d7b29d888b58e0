import { formOf } from './form-of.js';
import { describe, expect, it } from 'vitest';
import { defaultForm } from '../../src/renderer/lib/run-form.js';
import { formFromSaved, formToSaved } from '../../src/renderer/lib/settings-sync.js';

describe('the form from saved settings', () => {
  it('takes saved values over the defaults', () => {
    const form = formFromSaved(defaultForm(), { label: 'nightly', env: [{ name: 'A', value: '1' }], diffusion: true });
    expect(form.values.label).toBe('nightly');
    expect(form.env).toEqual([{ name: 'A', value: '1' }]);
    expect(form.diffusion).toBe(true);
    expect(form.values.concurrency).toBe(defaultForm().values.concurrency);
  });

  it('keeps each field under its flag, and reads a form saved under the config keys of an earlier version', () => {
    const form = formOf({ engine: 'vllm', 'max-seqs': '64', 'api-key': 'sk-x' });
    const saved = formToSaved(form);
    expect(saved).toMatchObject({ engine: 'vllm', 'max-seqs': '64', 'api-key': 'sk-x' });
    expect(formFromSaved(defaultForm(), saved)).toEqual(form);
    const older = formFromSaved(defaultForm(), { maxSeqs: '8', startTimeout: '30m', tensorParallel: '2' });
    expect(older.values).toMatchObject({ 'max-seqs': '8', 'start-timeout': '30m', tp: '2' });
  });

  it('ignores keys the form does not have and values of another type (another version saved them)', () => {
    const form = formFromSaved(defaultForm(), { noSuchField: 'x', label: false, env: 'HF_TOKEN=1' });
    expect(form).toEqual(defaultForm());
  });
});
