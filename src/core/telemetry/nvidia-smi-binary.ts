import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

/** Where the nvidia-smi binary was found, or why it was not. */
export type NvidiaSmiLocation =
  { found: true; path: string; from: 'option' | 'env' | 'path' } | { found: false; reason: string };

function isExecutable(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The one line that tells a user how to get GPU telemetry. */
const NVIDIA_SMI_FIX = 'install the NVIDIA driver or pass --nvidia-smi PATH';

/**
 * Finds nvidia-smi: an explicit path first, else env SERVEBENCH_NVIDIA_SMI, else PATH.
 * An explicit path or env value that is not an executable is reported, not silently skipped.
 */
export function resolveNvidiaSmi(explicitPath?: string, env: NodeJS.ProcessEnv = process.env): NvidiaSmiLocation {
  if (explicitPath) {
    const path = resolve(explicitPath);
    return isExecutable(path)
      ? { found: true, path, from: 'option' }
      : {
          found: false,
          reason: `nvidia-smi not found at ${explicitPath} (--nvidia-smi); pass the path of an executable nvidia-smi`,
        };
  }
  const fromEnv = env.SERVEBENCH_NVIDIA_SMI;
  if (fromEnv) {
    const path = resolve(fromEnv);
    return isExecutable(path)
      ? { found: true, path, from: 'env' }
      : {
          found: false,
          reason: `nvidia-smi not found at ${fromEnv} (SERVEBENCH_NVIDIA_SMI); fix the variable or unset it`,
        };
  }
  const names = process.platform === 'win32' ? ['nvidia-smi.exe'] : ['nvidia-smi'];
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    for (const name of names) {
      const candidate = join(dir, name);
      if (isExecutable(candidate)) return { found: true, path: candidate, from: 'path' };
    }
  }
  return { found: false, reason: `nvidia-smi not found; ${NVIDIA_SMI_FIX}` };
}
