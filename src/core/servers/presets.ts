import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { z } from 'zod';
import { ServerConfigSchema } from '../../shared/config.js';
import { SERVER_KEYS } from '../../shared/server-schema.js';
import { UserError } from '../errors.js';
import { parseYamlText } from '../yaml-text.js';
import { findPackageRoot } from '../package-root.js';

/** A server config as written by a user or a preset (defaults not yet applied). */
export type ServerConfigInput = z.input<typeof ServerConfigSchema>;

/** A named, ready-made server setup from resources/presets. */
export interface Preset {
  name: string;
  description: string;
  server: ServerConfigInput;
}

const PresetFileSchema = z.object({
  description: z.string().default(''),
  server: z.record(z.string(), z.unknown()),
});

/** The presets folder of the package (resources/presets). */
function presetsDir(): string {
  const root = findPackageRoot();
  if (!root) throw new UserError('cannot find the servebench package folder (resources/presets)');
  return join(root, 'resources', 'presets');
}

function readPreset(file: string): Preset {
  const name = basename(file).replace(/\.ya?ml$/, '');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UserError(`preset '${name}' cannot be read: ${(error as Error).message.split('\n')[0]}`);
  }
  const yaml = parseYamlText(text);
  if ('problem' in yaml) throw new UserError(`preset '${name}' cannot be read: ${yaml.problem}`);
  const raw = yaml.value;
  const parsed = PresetFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UserError(`preset '${name}' is invalid: ${issue?.path.join('.') ?? ''} ${issue?.message ?? ''}`.trim());
  }
  const unknown = Object.keys(parsed.data.server).filter((k) => !SERVER_KEYS.includes(k));
  if (unknown.length > 0) throw new UserError(`preset '${name}' is invalid: unknown server setting '${unknown[0]}'`);
  // Validate the whole server config (defaults applied) but hand back the input form.
  const check = ServerConfigSchema.safeParse(parsed.data.server);
  if (!check.success) {
    const issue = check.error.issues[0];
    throw new UserError(
      `preset '${name}' is invalid: server.${issue?.path.join('.') ?? ''} ${issue?.message ?? ''}`.trim(),
    );
  }
  return { name, description: parsed.data.description, server: parsed.data.server as ServerConfigInput };
}

/** Every preset, sorted by name. */
export function listPresets(dir: string = presetsDir()): Preset[] {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f));
  } catch {
    return [];
  }
  return files.sort().map((f) => readPreset(join(dir, f)));
}

/** The server config input of one preset; an unknown name is a UserError listing the known ones. */
export function loadPreset(name: string, dir: string = presetsDir()): ServerConfigInput {
  const found = listPresets(dir).find((p) => p.name === name);
  if (!found) {
    const names = listPresets(dir).map((p) => p.name);
    throw new UserError(`unknown --preset '${name}'; available: ${names.join(', ') || '(none)'}`);
  }
  return found.server;
}
