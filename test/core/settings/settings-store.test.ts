import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SETTINGS_FILE, createSettingsStore, readSettingsSync } from '../../../src/core/settings/settings-store.js';
import type { SecretCipher } from '../../../src/core/settings/settings-store.js';

// A stand-in for safeStorage: reversible, and its output shares nothing readable with the input.
const cipher: SecretCipher = {
  encrypt: (plain) => Buffer.from([...Buffer.from(plain)].map((b) => b ^ 0x5a)).toString('base64'),
  decrypt: (sealed) => Buffer.from([...Buffer.from(sealed, 'base64')].map((b) => b ^ 0x5a)).toString(),
};
const FORM = {
  label: 'nightly',
  gpuPricePerHour: '2.5',
  diffusion: false,
  env: [
    { name: 'HF_TOKEN', value: 'hf_abcdefSECRET' },
    { name: 'CUDA_VISIBLE_DEVICES', value: '0' },
  ],
  vary: [{ key: 'tp', values: '1,2' }],
  apiKey: 'sk-live-SECRET',
};

describe('settings store', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sb-settings-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('persists the form and runs folder; secrets sealed in the file, never as text, and back on load', async () => {
    await createSettingsStore({ dir, cipher }).saveSettings({ form: FORM, runsDir: '/data/runs' });
    const text = await readFile(join(dir, SETTINGS_FILE), 'utf8');
    expect(text).not.toContain('SECRET');
    expect(text).toContain('nightly');
    const again = await createSettingsStore({ dir, cipher }).getSettings();
    expect(again.settings).toEqual({ form: FORM, runsDir: '/data/runs' });
    expect(again.secrets).toBe('encrypted');
    expect(readSettingsSync(dir)).toEqual({ runsDir: '/data/runs' });
  });

  it('without a cipher, secrets stay in memory: the file has none, a new process gets them empty', async () => {
    const store = createSettingsStore({ dir });
    const saved = await store.saveSettings({ form: FORM });
    expect(saved.secrets).toBe('memory');
    expect(saved.settings.form).toEqual(FORM);
    expect(await readFile(join(dir, SETTINGS_FILE), 'utf8')).not.toContain('SECRET');
    const fresh = (await createSettingsStore({ dir }).getSettings()).settings.form;
    expect(fresh?.apiKey).toBe('');
    expect(fresh?.env).toEqual([
      { name: 'HF_TOKEN', value: '' },
      { name: 'CUDA_VISIBLE_DEVICES', value: '0' },
    ]);
  });

  it('without a cipher, keeps secrets the desktop app sealed in a shared file', async () => {
    await createSettingsStore({ dir, cipher }).saveSettings({ form: FORM });
    await createSettingsStore({ dir }).saveSettings({ runsDir: '/elsewhere' });
    const back = await createSettingsStore({ dir, cipher }).getSettings();
    expect(back.settings.form?.apiKey).toBe('sk-live-SECRET');
    expect(back.settings.runsDir).toBe('/elsewhere');
  });

  it('a save keeps what it does not name', async () => {
    const store = createSettingsStore({ dir, cipher });
    await store.saveSettings({ form: FORM });
    await store.saveSettings({ runsDir: '/r' });
    expect((await createSettingsStore({ dir, cipher }).getSettings()).settings).toEqual({ form: FORM, runsDir: '/r' });
  });

  it.each([
    ['not JSON', '{"version":1,"form":'],
    ['a wrong shape', JSON.stringify({ version: 1, form: { label: 42 } })],
    ['a newer version', JSON.stringify({ version: 9 })],
  ])('a damaged file (%s) is ignored with one line, never a crash', async (_what, text) => {
    await writeFile(join(dir, SETTINGS_FILE), text);
    const lines: string[] = [];
    const answer = await createSettingsStore({ dir, cipher, onWarning: (l) => lines.push(l) }).getSettings();
    expect(answer.settings).toEqual({});
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/settings file .* is damaged/);
    expect(lines[0]).not.toContain('\n');
    expect(readSettingsSync(dir)).toEqual({});
  });

  it('a secret that no longer decrypts is dropped with one line, the rest loads', async () => {
    await createSettingsStore({ dir, cipher }).saveSettings({ form: FORM });
    const broken: SecretCipher = {
      ...cipher,
      decrypt: () => {
        throw new Error('keychain changed');
      },
    };
    const lines: string[] = [];
    const answer = await createSettingsStore({ dir, cipher: broken, onWarning: (l) => lines.push(l) }).getSettings();
    expect(answer.settings.form?.label).toBe('nightly');
    expect(answer.settings.form?.apiKey).toBe('');
    expect(lines).toEqual([expect.stringMatching(/2 saved secret\(s\) .* could not be decrypted/)]);
  });

  it('a runs folder that is not a full path is refused with one line naming the fix', async () => {
    await expect(createSettingsStore({ dir }).saveSettings({ runsDir: 'runs' })).rejects.toThrow(/must be a full path/);
  });

  it('with no folder nothing is written and the settings live as long as the store', async () => {
    const store = createSettingsStore();
    await store.saveSettings({ form: { label: 'x' } });
    expect((await store.getSettings()).settings.form).toEqual({ label: 'x' });
  });
});
