import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { AppSettingsSchema } from '../../shared/settings.js';
import type { AppSettings, FormValues, SettingsAnswer } from '../../shared/settings.js';
import { isSecretName } from '../../shared/secret-names.js';
import { FileReadError, readTextFile, readTextFileSync } from '../bounded-file.js';
import { nodeRunFs, replaceFile } from '../runs/run-fs.js';
import { userDataDir } from '../user-data-dir.js';
import { checkRunsParent } from '../runs/run-store.js';

export { userDataDir };

/** The settings file in the user-data folder. */
export const SETTINGS_FILE = 'settings.json';

/** The settings are a form and a few paths: past this the file is not one servebench wrote. */
const SETTINGS_MAX_BYTES = 2 ** 20;

/** Encrypts secrets for the disk (Electron's safeStorage in the desktop app); text in, base64 out. */
export interface SecretCipher {
  encrypt(plain: string): string;
  decrypt(sealed: string): string;
}

/** What the store needs: where to keep the file (none: nothing persists) and how to seal secrets. */
export interface SettingsStoreOptions {
  /** The user-data folder; without it nothing is written (tests, a throwaway service). */
  dir?: string;
  /** Without it secrets stay in this process's memory and never reach the disk (browser mode). */
  cipher?: SecretCipher;
  /** Told, in one line, about a damaged file or a secret that no longer decrypts. */
  onWarning?: (line: string) => void;
  /** The folder runs go to now, reported back to the app. */
  runsDir?: string;
}

/** The contract's two settings calls. */
export interface SettingsStore {
  getSettings(): Promise<SettingsAnswer>;
  saveSettings(settings: AppSettings): Promise<SettingsAnswer>;
}

const FileSchema = AppSettingsSchema.extend({
  version: z.literal(1),
  /** Secret slot -> sealed value (base64 from the cipher). */
  secrets: z.record(z.string(), z.string()).optional(),
});

/** The settings that choose where things are, read before anything starts (secrets are not read); {} if none. */
export function readSettingsSync(dir: string): AppSettings {
  try {
    const file = join(dir, SETTINGS_FILE);
    const text = readTextFileSync(file, { what: `settings file ${file}`, maxBytes: SETTINGS_MAX_BYTES });
    const parsed = FileSchema.safeParse(JSON.parse(text));
    return parsed.success ? { ...(parsed.data.runsDir ? { runsDir: parsed.data.runsDir } : {}) } : {};
  } catch {
    return {};
  }
}

const envSlot = (name: string): string => `env:${name}`;
const formSlot = (key: string): string => `form:${key}`;

/** Splits the secrets out of the form: the form as it may be written, and slot -> secret value. */
function splitSecrets(form: FormValues): { form: FormValues; secrets: Map<string, string> } {
  const secrets = new Map<string, string>();
  const out: FormValues = {};
  for (const [key, value] of Object.entries(form)) {
    if (key === 'env' && Array.isArray(value)) {
      out.env = (value as { name: string; value: string }[]).map((row) => {
        if (!isSecretName(row.name) || !row.value) return row;
        secrets.set(envSlot(row.name), row.value);
        return { name: row.name, value: '' };
      });
    } else if (typeof value === 'string' && value && isSecretName(key)) {
      secrets.set(formSlot(key), value);
      out[key] = '';
    } else out[key] = value;
  }
  return { form: out, secrets };
}

/** Puts kept secrets back into a form whose secret fields were emptied for the disk. */
function joinSecrets(form: FormValues, secrets: Map<string, string>): FormValues {
  const out: FormValues = { ...form };
  for (const [key, value] of Object.entries(form)) {
    if (key === 'env' && Array.isArray(value)) {
      out.env = (value as { name: string; value: string }[]).map((row) =>
        !row.value && secrets.has(envSlot(row.name)) ? { ...row, value: secrets.get(envSlot(row.name)) ?? '' } : row,
      );
    } else if (value === '' && secrets.has(formSlot(key))) out[key] = secrets.get(formSlot(key)) ?? '';
  }
  return out;
}

/**
 * The app's settings in `<dir>/settings.json`, validated on load (a damaged file is ignored, with one line);
 * secrets sealed by the cipher in the file, or held in memory only when there is none.
 */
export function createSettingsStore(options: SettingsStoreOptions = {}): SettingsStore {
  const { dir, cipher, onWarning = () => undefined, runsDir } = options;
  const file = dir ? join(dir, SETTINGS_FILE) : undefined;
  // Without a cipher the secrets live here only; with one, this caches what the file holds.
  let memory: { settings: AppSettings; secrets: Map<string, string> } | null = null;
  // Without a cipher, secrets the desktop app sealed in a shared file are kept as they are, unread.
  let sealedElsewhere: Record<string, string> = {};
  const answer = (settings: AppSettings, secrets: Map<string, string>): SettingsAnswer => ({
    settings: settings.form ? { ...settings, form: joinSecrets(settings.form, secrets) } : settings,
    secrets: cipher ? 'encrypted' : 'memory',
    ...(runsDir ? { runsDir } : {}),
  });

  async function load(): Promise<{ settings: AppSettings; secrets: Map<string, string> }> {
    if (memory) return memory;
    const empty = { settings: {}, secrets: new Map<string, string>() };
    if (!file) return empty;
    let text: string;
    try {
      text = await readTextFile(file, { what: `settings file ${file}`, maxBytes: SETTINGS_MAX_BYTES });
    } catch (error) {
      // Not there yet is the normal first start; a FIFO or a huge file is said, and the defaults used.
      if (error instanceof FileReadError && error.refusal !== 'missing')
        onWarning(`${error.message}; using the defaults, it is rewritten at the next save`);
      return empty;
    }
    let parsed: z.infer<typeof FileSchema>;
    try {
      const result = FileSchema.safeParse(JSON.parse(text));
      if (!result.success) {
        const issue = result.error.issues[0];
        throw new Error(`${issue?.path.join('.') || 'file'}: ${issue?.message ?? 'invalid'}`);
      }
      parsed = result.data;
    } catch (error) {
      const why = (error instanceof Error ? error.message : String(error)).split('\n')[0];
      onWarning(`settings file ${file} is damaged (${why}); using the defaults, it is rewritten at the next save`);
      return empty;
    }
    const secrets = new Map<string, string>();
    let lost = 0;
    if (!cipher) sealedElsewhere = parsed.secrets ?? {};
    else
      for (const [slot, sealed] of Object.entries(parsed.secrets ?? {})) {
        try {
          secrets.set(slot, cipher.decrypt(sealed));
        } catch {
          lost++;
        }
      }
    if (lost > 0)
      onWarning(
        `${lost} saved secret(s) in ${file} could not be decrypted (another user or keychain?); enter them again`,
      );
    const { secrets: _sealed, version: _version, ...settings } = parsed;
    memory = { settings, secrets };
    return memory;
  }

  // Saves one after another: each lays its part over the last one's (two at once must not both read the old).
  let saving: Promise<unknown> = Promise.resolve();

  async function save(input: AppSettings): Promise<SettingsAnswer> {
    if (input.runsDir !== undefined) await checkRunsFolder(input.runsDir);
    const before = await load();
    // A save names what changed; what it leaves out is kept (the form's secrets too).
    const settings = { ...before.settings, ...AppSettingsSchema.parse(input) };
    const split = input.form ? splitSecrets(input.form) : { form: before.settings.form, secrets: before.secrets };
    const stored: AppSettings = { ...settings, ...(split.form ? { form: split.form } : {}) };
    memory = { settings: stored, secrets: split.secrets };
    if (file && dir) {
      // No cipher: secrets stay in memory and the file gets none of them.
      const sealed: Record<string, string> = cipher ? {} : { ...sealedElsewhere };
      if (cipher) for (const [slot, value] of split.secrets) sealed[slot] = cipher.encrypt(value);
      const body = { version: 1, ...stored, ...(Object.keys(sealed).length ? { secrets: sealed } : {}) };
      await mkdir(dir, { recursive: true });
      // Written whole then renamed: a crash mid-write leaves the old file, never half a one.
      await replaceFile(nodeRunFs, file, JSON.stringify(body, null, 2) + '\n', { mode: 0o600 });
    }
    return answer(stored, split.secrets);
  }

  return {
    async getSettings() {
      const { settings, secrets } = await load();
      return answer(settings, secrets);
    },
    saveSettings(input) {
      const done = saving.then(() => save(input));
      saving = done.catch(() => undefined);
      return done;
    },
  };
}

/** A runs folder the app may use: not a system folder, and one this user can create and write run folders in. */
async function checkRunsFolder(path: string): Promise<void> {
  try {
    await checkRunsParent(path);
  } catch (error) {
    // checkOutWritable names --out (the CLI's flag): here the setting is the runs folder.
    if (error instanceof Error)
      error.message = error.message.replace(/^--out /, 'runs folder ').replace(/--out\b/g, 'runs folder');
    throw error;
  }
}
