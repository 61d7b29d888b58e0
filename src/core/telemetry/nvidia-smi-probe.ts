import type { CommandRunner, ExecResult } from './exec.js';
import { FIELD_ALTERNATIVES, type ProbedFields } from './nvidia-smi-fields.js';
import { splitSmiCsv } from './nvidia-smi-values.js';

/** Why nvidia-smi cannot be used at all; `reason` is one line naming the fix. */
export interface SmiFailure {
  ok: false;
  reason: string;
}

/** A successful probe: the fields to use and the lines the probe query printed (one per GPU). */
export interface SmiProbe {
  ok: true;
  fields: ProbedFields;
  lines: string[];
}

const REFUSED_FIELD = /Field "([^"]+)" is not a valid field to query/g;

/** Field names nvidia-smi said it does not know, from its output. */
export function refusedFields(output: string): string[] {
  return [...output.matchAll(REFUSED_FIELD)].map((m) => m[1] ?? '').filter(Boolean);
}

/** How long one nvidia-smi query may take: without persistence mode its first call on many GPUs takes seconds. */
export const SMI_TIMEOUT_MS = 15_000;

/**
 * Turns nvidia-smi's own failure text into one line naming the fix, or null when it is not a driver-level failure.
 * A query that hangs, floods its output or is cancelled ends the probing at once: nothing after it would answer.
 */
export function describeSmiFailure(result: ExecResult): string | null {
  if (result.aborted) return 'nvidia-smi was stopped (cancelled)';
  if (result.timedOut) {
    return `nvidia-smi gave no answer within ${SMI_TIMEOUT_MS / 1000} s and was stopped: it hangs (a GPU or driver in a bad state); run nvidia-smi by hand to see it, reset the GPU or reboot, or pass --nvidia-smi PATH`;
  }
  if (result.tooLarge) {
    return 'nvidia-smi printed more than 1 MiB for one query and was stopped: that is no nvidia-smi answer; check --nvidia-smi (or SERVEBENCH_NVIDIA_SMI)';
  }
  if (result.notFound)
    return `nvidia-smi could not be started (${firstLine(result.stderr) || 'not found'}); install the NVIDIA driver or pass --nvidia-smi PATH`;
  const text = `${result.stdout}\n${result.stderr}`;
  if (/couldn't communicate with the NVIDIA driver|NVIDIA-SMI has failed/i.test(text)) {
    return 'nvidia-smi cannot talk to the NVIDIA driver ("NVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA driver"); check that the driver is installed and loaded';
  }
  if (/Driver\/library version mismatch/i.test(text)) {
    return 'NVIDIA driver/library version mismatch; reboot (or reload the nvidia kernel module) after the driver update';
  }
  if (/No devices were found/i.test(text)) return 'nvidia-smi found no NVIDIA GPU on this machine';
  if (/Failed to initialize NVML/i.test(text)) {
    return `nvidia-smi failed to initialize NVML (${firstLine(text)}); check the NVIDIA driver installation`;
  }
  if (/Insufficient Permissions|permission denied/i.test(text) && result.exitCode !== 0) {
    return `nvidia-smi was refused access (${firstLine(text)}); run as a user allowed to query the GPU`;
  }
  return null;
}

function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .map((l) => l.trim())
      .find(Boolean) ?? ''
  );
}

function dataLines(stdout: string): string[] {
  return stdout.split('\n').filter((l) => l.trim().length > 0);
}

function looksValid(result: ExecResult, width: number): boolean {
  if (result.exitCode !== 0) return false;
  const lines = dataLines(result.stdout);
  return lines.length > 0 && lines.every((l) => splitSmiCsv(l).length === width);
}

/**
 * Probes a list of --query-gpu fields once and drops the ones this driver refuses (one bad field
 * fails the whole query). Tries each field's alternatives (e.g. clocks_event_reasons.active for
 * clocks_throttle_reasons.active). Reads the refused name from nvidia-smi's error when it names one,
 * else probes field by field.
 */
export async function probeFields(
  runner: CommandRunner,
  binary: string,
  wanted: readonly string[],
  env?: NodeJS.ProcessEnv,
  signal?: AbortSignal,
): Promise<SmiProbe | SmiFailure> {
  const candidates = wanted.map((name) => [name, ...(FIELD_ALTERNATIVES[name] ?? [])]);
  const choice = candidates.map(() => 0);
  const dropped: string[] = [];
  const query = async (names: string[]) =>
    runner.run(binary, [`--query-gpu=${names.join(',')}`, '--format=csv,noheader,nounits'], {
      env,
      timeoutMs: SMI_TIMEOUT_MS,
      ...(signal ? { signal } : {}),
    });
  const current = () => {
    const q: string[] = [];
    const c: string[] = [];
    candidates.forEach((alts, i) => {
      const pick = alts[choice[i] ?? 0];
      if (pick !== undefined) {
        q.push(pick);
        c.push(alts[0] ?? pick);
      }
    });
    return { query: q, canonical: c };
  };
  const advance = (field: string): boolean => {
    const i = candidates.findIndex((alts, k) => alts[choice[k] ?? 0] === field);
    if (i < 0) return false;
    choice[i] = (choice[i] ?? 0) + 1;
    const alts = candidates[i] ?? [];
    if ((choice[i] ?? 0) >= alts.length && alts[0]) dropped.push(alts[0]);
    return true;
  };

  const maxTries = candidates.reduce((n, alts) => n + alts.length, 0) + 1;
  for (let attempt = 0; attempt < maxTries; attempt++) {
    const { query: names, canonical } = current();
    if (names.length === 0) break;
    const result = await query(names);
    const failure = describeSmiFailure(result);
    if (failure) return { ok: false, reason: failure };
    if (looksValid(result, names.length)) {
      return { ok: true, fields: { query: names, canonical, dropped }, lines: dataLines(result.stdout) };
    }
    const refused = refusedFields(`${result.stdout}\n${result.stderr}`).filter((f) => names.includes(f));
    if (refused.length === 0) break;
    for (const field of refused) advance(field);
  }
  return probeOneByOne(candidates, query, dropped);
}

async function probeOneByOne(
  candidates: string[][],
  query: (names: string[]) => Promise<ExecResult>,
  alreadyDropped: string[],
): Promise<SmiProbe | SmiFailure> {
  const names: string[] = [];
  const canonical: string[] = [];
  const dropped = new Set(alreadyDropped);
  let lastError = '';
  for (const alts of candidates) {
    let accepted = false;
    for (const name of alts) {
      const result = await query([name]);
      const failure = describeSmiFailure(result);
      if (failure) return { ok: false, reason: failure };
      if (looksValid(result, 1)) {
        names.push(name);
        canonical.push(alts[0] ?? name);
        accepted = true;
        break;
      }
      lastError = firstLine(`${result.stdout}\n${result.stderr}`);
    }
    if (!accepted && alts[0]) dropped.add(alts[0]);
  }
  if (names.length === 0) {
    return {
      ok: false,
      reason: `nvidia-smi accepted none of the telemetry fields (${lastError || 'no output'}); check the NVIDIA driver`,
    };
  }
  const result = await query(names);
  if (!looksValid(result, names.length)) {
    return {
      ok: false,
      reason: `nvidia-smi query failed (${firstLine(`${result.stdout}\n${result.stderr}`) || `exit ${result.exitCode}`}); check the NVIDIA driver`,
    };
  }
  return { ok: true, fields: { query: names, canonical, dropped: [...dropped] }, lines: dataLines(result.stdout) };
}
