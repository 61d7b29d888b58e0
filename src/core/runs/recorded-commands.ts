import { formatCommand } from '../servers/engines/common.js';

// What a config makes servebench run or hand to a server: a command line, an engine binary, a Python, a
// llama-server, an nvidia-smi, the server's environment (PATH, LD_PRELOAD, PYTHONPATH decide what loads) and
// arguments (vLLM's --middleware imports a module), the simulator's arguments (--truth writes a file), and the
// workload files whose text is sent to the server. A run folder from someone else can set any of them; `run
// --from` shows these and asks before it runs them (see run-seal.ts for how a folder of one's own is known).

/** One setting that decides what runs, with its value as a user reads it. */
export interface ExecutedSetting {
  /** Where it is set: `server.command`, `server.env.LD_PRELOAD`, `serverVariants[1].python`, `nvidiaSmi`. */
  setting: string;
  value: string;
}

/** The interpreter a fresh run uses anyway: recorded as the default, it asks nothing. */
const DEFAULT_PYTHON = 'python3';

const strings = (v: unknown): string[] | null =>
  Array.isArray(v) && v.length > 0 ? v.map((x) => String(x)) : null;

/** The settings of one server section (or sweep variant) that decide what runs. */
function serverSettings(server: Record<string, unknown>, at: string): ExecutedSetting[] {
  const out: ExecutedSetting[] = [];
  const command = strings(server.command);
  if (command) out.push({ setting: `${at}.command`, value: formatCommand(command[0] as string, command.slice(1)) });
  for (const key of ['python', 'llamaServer'] as const) {
    const v = server[key];
    if (typeof v === 'string' && v !== '' && !(key === 'python' && v === DEFAULT_PYTHON))
      out.push({ setting: `${at}.${key}`, value: v });
  }
  for (const key of ['extraArgs', 'simArgs'] as const) {
    const args = strings(server[key]);
    if (args) out.push({ setting: `${at}.${key}`, value: formatCommand(args[0] as string, args.slice(1)) });
  }
  const env = server.env;
  if (env && typeof env === 'object' && !Array.isArray(env))
    for (const [name, v] of Object.entries(env as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      out.push({ setting: `${at}.env.${name}`, value: String(v) });
  return out;
}

/** Every setting of a config (recorded or about to run) that decides what runs or which files are sent, in order. */
export function executedSettings(config: unknown): ExecutedSetting[] {
  if (!config || typeof config !== 'object') return [];
  const c = config as Record<string, unknown>;
  const out: ExecutedSetting[] = [];
  if (c.server && typeof c.server === 'object') out.push(...serverSettings(c.server as Record<string, unknown>, 'server'));
  if (Array.isArray(c.serverVariants))
    c.serverVariants.forEach((v: unknown, i) => {
      if (v && typeof v === 'object') out.push(...serverSettings(v as Record<string, unknown>, `serverVariants[${i}]`));
    });
  for (const key of ['nvidiaSmi', 'prompts', 'trace'] as const) {
    const v = c[key];
    if (typeof v === 'string' && v !== '') out.push({ setting: key, value: v });
  }
  return out;
}
