import { homedir } from 'node:os';
import { join } from 'node:path';

/** The user-data folder of `servebench ui` (the desktop app's on Linux too): SERVEBENCH_CONFIG_DIR, else the OS's. */
export function userDataDir(
  env: NodeJS.ProcessEnv = process.env,
  platform = process.platform,
  home = homedir(),
): string {
  if (env.SERVEBENCH_CONFIG_DIR) return env.SERVEBENCH_CONFIG_DIR;
  if (platform === 'win32') return join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'servebench');
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'servebench');
  return join(env.XDG_CONFIG_HOME ?? join(home, '.config'), 'servebench');
}
