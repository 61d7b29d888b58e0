import { resolve } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { plainNumber } from '../shared/field-values.js';
import { UserError } from '../core/errors.js';
import { wrapHelp } from './help-text.js';
import { helpAsked } from './args-error.js';
import {
  applyOverrides,
  DEFAULT_PROFILE_NAME,
  DEFAULT_SIM_MODEL,
  FAULT_SPECS,
  listProfiles,
  loadBundledProfile,
  loadProfile,
  parseFault,
  PROFILE_PARAMS,
  SimOomError,
  startSimServer,
  validateProfile,
  type Mimic,
} from '../core/sim/index.js';

const MIMICS: readonly Mimic[] = ['vllm', 'sglang', 'openai'];

function help(): string {
  const params = PROFILE_PARAMS.map((p) => `  --${p.flag.padEnd(22)} ${p.doc}`).join('\n');
  let profiles: string;
  try {
    profiles = listProfiles().join(', ');
  } catch {
    profiles = '(resources/sim-profiles not found)';
  }
  return `Usage: servebench sim --port P [options]

Runs the simulated engine: a real HTTP server that behaves like vLLM or SGLang on a GPU
(continuous batching, exact tokenizer, /metrics, a fake GPU, faults, a truth log). Its numbers
are simulated. Runs until Ctrl-C / SIGTERM. See docs/simulator.md.

Options:
  --port P                 port to listen on (0 = a free one; default 8000, sglang 30000)
  --host H                 address to bind (default 127.0.0.1)
  --model NAME             served model name (default ${DEFAULT_SIM_MODEL})
  --mimic vllm|sglang|openai   endpoints, log lines and /metrics names to imitate (default vllm)
  --profile NAME           bundled profile (default ${DEFAULT_PROFILE_NAME}): ${profiles}
  --profile-file FILE      a profile YAML file instead
  --seed N                 seed for jitter, early EOS and faults (default 0)
  --truth FILE             write one JSON line per request with server-side timestamps
  --gpu-state FILE         keep a fake GPU state file for resources/fake-nvidia-smi
  --fault SPEC             inject a fault (repeatable): ${FAULT_SPECS.join(', ')}
  --lora-modules NAME[=PATH]  serve a LoRA adapter beside the model (repeatable; the path is not read)
  --enable-prompt-tokens-details, --enable-cache-report
                           report cached prompt tokens in usage as vLLM and SGLang do with these flags
  -h, --help               this help

Profile parameters (override the profile):
${params}`;
}

function intFlag(name: string, raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const n = plainNumber(raw, true);
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new UserError(`--${name} must be a whole number from ${min} to ${max} (got '${raw}')`);
  }
  return n;
}

/** The adapter names of --lora-modules NAME[=PATH] (the simulator reads no weights). */
function loraNames(values: readonly string[] | undefined): string[] {
  const names = (values ?? []).flatMap((v) => v.split(/\s+/)).map((v) => v.split('=')[0]?.trim() ?? '');
  const bad = names.find((n) => !/^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(n));
  if (bad !== undefined) throw new UserError(`--lora-modules takes NAME or NAME=PATH (got '${bad}')`);
  return names;
}

/** `servebench sim`: runs the simulated engine until SIGINT/SIGTERM; exit 0, or 1 for oom-on-start / crash-after. */
export async function simCommand(argv: string[]): Promise<number> {
  const options: ParseArgsConfig['options'] = {
    port: { type: 'string' },
    host: { type: 'string' },
    model: { type: 'string' },
    mimic: { type: 'string' },
    profile: { type: 'string' },
    'profile-file': { type: 'string' },
    seed: { type: 'string' },
    truth: { type: 'string' },
    'gpu-state': { type: 'string' },
    fault: { type: 'string', multiple: true },
    'lora-modules': { type: 'string', multiple: true },
    'enable-prompt-tokens-details': { type: 'boolean' },
    'enable-cache-report': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  };
  for (const p of PROFILE_PARAMS) options[p.flag] = { type: 'string' };
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    values = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values as typeof values;
  } catch (error) {
    if (helpAsked(argv)) {
      console.log(wrapHelp(help()));
      return 0;
    }
    const msg = (error as Error).message.split('\n')[0] ?? 'bad arguments';
    throw new UserError(`${msg.replace(/\.$/, '')}; run 'servebench sim --help' for the options`);
  }
  if (values.help) {
    console.log(wrapHelp(help()));
    return 0;
  }
  const str = (k: string): string | undefined => values[k] as string | undefined;

  const mimicRaw = str('mimic') ?? 'vllm';
  if (!MIMICS.includes(mimicRaw as Mimic))
    throw new UserError(`--mimic must be one of ${MIMICS.join(', ')} (got '${mimicRaw}')`);
  const mimic = mimicRaw as Mimic;
  if (str('profile') && str('profile-file')) throw new UserError('give either --profile or --profile-file, not both');
  const port = intFlag('port', str('port'), 0, 65535) ?? (mimic === 'sglang' ? 30000 : 8000);
  const seed = intFlag('seed', str('seed'), 0, 2 ** 31 - 1) ?? 0;
  const faults = ((values.fault as string[] | undefined) ?? []).map(parseFault);

  // --profile names a bundled profile only; a file of one's own is --profile-file's.
  const file = str('profile-file');
  let profile =
    file !== undefined ? loadProfile(resolve(file)) : loadBundledProfile(str('profile') ?? DEFAULT_PROFILE_NAME);
  const overrides: Record<string, string> = {};
  for (const p of PROFILE_PARAMS) {
    const v = str(p.flag);
    if (v !== undefined) overrides[p.flag] = v;
  }
  profile = validateProfile(applyOverrides(profile, overrides, 'flags'));

  const log = (line: string): void => console.log(line);
  let crashed = false;
  let server;
  try {
    server = await startSimServer({
      host: str('host') ?? '127.0.0.1',
      port,
      model: str('model') ?? DEFAULT_SIM_MODEL,
      adapters: loraNames(values['lora-modules'] as string[] | undefined),
      mimic,
      cacheReport: values['enable-prompt-tokens-details'] === true || values['enable-cache-report'] === true,
      profile,
      seed,
      truthFile: str('truth'),
      gpuStateFile: str('gpu-state'),
      faults,
      log,
      onCrash: () => {
        crashed = true;
        // A crashed engine takes its process with it; whoever supervises it sees the exit.
        process.exit(1);
      },
    });
  } catch (error) {
    if (error instanceof SimOomError) return 1;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      throw new UserError(`port ${port} is already in use; pick another with --port (0 = any free port)`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
      throw new UserError(`cannot bind to host '${str('host')}'; use --host 127.0.0.1`);
    if (code === 'EACCES') throw new UserError(`no permission to bind port ${port}; use a port above 1023`);
    throw error;
  }

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  if (crashed) return 1;
  if (mimic === 'vllm') log(`(APIServer pid=${process.pid}) INFO:     Shutting down`);
  else log('INFO:     Shutting down');
  await server.close();
  log(`servebench sim: stopped (${signal})`);
  return 0;
}
