import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SETTINGS_FILE, createSettingsStore } from '../../src/core/settings/settings-store.js';

vi.mock('electron', () => import('./fake-ipc-main.js'));
const { handlers } = await import('./fake-ipc-main.js');
const { registerContractIpc } = await import('../../src/main/ipc.js');
const { safeStorageCipher } = await import('../../src/main/secret-cipher.js');

// safeStorage as Electron has it: Buffers in and out, a backend name on Linux.
function fakeSafeStorage(backend = 'gnome_libsecret', available = true) {
  return {
    isEncryptionAvailable: () => available,
    getSelectedStorageBackend: () => backend,
    encryptString: (plain: string) => Buffer.from(`sealed:${Buffer.from(plain).toString('hex')}`),
    decryptString: (sealed: Buffer) => Buffer.from(sealed.toString().slice('sealed:'.length), 'hex').toString(),
  };
}
const sender = { sender: { id: 1 } };
const engine = { call: vi.fn(async () => ({ ok: true as const, result: 'engine' })), onEvent: () => () => undefined };

describe('settings in the desktop app (main, safeStorage)', () => {
  let dir: string;
  beforeEach(async () => {
    handlers.clear();
    dir = await mkdtemp(join(tmpdir(), 'sb-main-settings-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('main answers the settings itself, sealing secrets with safeStorage; the engine never sees them', async () => {
    const settings = createSettingsStore({ dir, cipher: safeStorageCipher(fakeSafeStorage(), 'linux') });
    registerContractIpc({
      engine,
      targets: () => [],
      local: { getSettings: settings.getSettings, saveSettings: settings.saveSettings },
    });
    const form = { env: [{ name: 'HF_TOKEN', value: 'hf_topSECRET' }] };
    const saved = (await handlers.get('servebench:saveSettings')!(sender, { form })) as {
      ok: boolean;
      result: { secrets: string };
    };
    expect(saved).toMatchObject({ ok: true, result: { secrets: 'encrypted', settings: { form } } });
    expect(await readFile(join(dir, SETTINGS_FILE), 'utf8')).not.toContain('SECRET');
    expect(await handlers.get('servebench:getSettings')!(sender)).toMatchObject({
      ok: true,
      result: { settings: { form } },
    });
    expect(engine.call).not.toHaveBeenCalled();
    // Other methods still go to the engine.
    expect(await handlers.get('servebench:listRuns')!(sender)).toEqual({ ok: true, result: 'engine' });
  });

  it('a bad settings call gets one line from the contract schema', async () => {
    const settings = createSettingsStore({ dir });
    registerContractIpc({ engine, targets: () => [], local: { saveSettings: settings.saveSettings } });
    const out = (await handlers.get('servebench:saveSettings')!(sender, { runsDir: 42 })) as {
      ok: boolean;
      error: string;
    };
    expect(out.ok).toBe(false);
    expect(out.error).toMatch(/runsDir/);
  });

  it('no keychain (unavailable, or Linux basic_text): no cipher, so secrets stay in memory', () => {
    expect(safeStorageCipher(fakeSafeStorage('gnome_libsecret', false), 'linux')).toBeUndefined();
    expect(safeStorageCipher(fakeSafeStorage('basic_text'), 'linux')).toBeUndefined();
    const cipher = safeStorageCipher(fakeSafeStorage(), 'darwin');
    expect(cipher?.decrypt(cipher.encrypt('tok'))).toBe('tok');
  });
});
