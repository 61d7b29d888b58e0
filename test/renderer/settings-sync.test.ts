import { describe, expect, it } from 'vitest';
import { defaultForm } from '../../src/renderer/lib/run-form.js';
import { formFromSaved } from '../../src/renderer/lib/settings-sync.js';

describe('the form from saved settings', () => {
  it('takes saved values over the defaults', () => {
    const form = formFromSaved(defaultForm(), { label: 'nightly', env: [{ name: 'A', value: '1' }], diffusion: true });
    expect(form.label).toBe('nightly');
    expect(form.env).toEqual([{ name: 'A', value: '1' }]);
    expect(form.diffusion).toBe(true);
    expect(form.concurrency).toBe(defaultForm().concurrency);
  });

  it('ignores keys the form does not have and values of another type (another version saved them)', () => {
    const form = formFromSaved(defaultForm(), { noSuchField: 'x', label: false, env: 'HF_TOKEN=1' });
    expect(form).toEqual(defaultForm());
  });
});
