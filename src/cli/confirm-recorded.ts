import { createInterface } from 'node:readline/promises';
import type { BenchConfig } from '../shared/config.js';
import { UserError } from '../core/errors.js';
import { executedSettings, type ExecutedSetting } from '../core/runs/recorded-commands.js';
import type { RecordedConfig } from './run-from.js';

/** The flag that runs a foreign run folder's recorded commands without asking (scripts, CI). */
const TRUST_FLAG = '--trust-recorded-commands';

/**
 * What the run is about to execute because a run folder said so, and that needs the user's yes: the settings
 * of `config` whose value is the recorded one, when the folder is not sealed as this user's. Values given
 * again on the command line, by --config or by a preset are the user's own and ask nothing.
 */
export function recordedToConfirm(from: RecordedConfig, config: BenchConfig): ExecutedSetting[] {
  if (from.sealed) return [];
  const recorded = new Set(from.recorded.map((s) => `${s.setting}\0${s.value}`));
  return executedSettings(config).filter((s) => recorded.has(`${s.setting}\0${s.value}`));
}

/** How to ask: the terminal if there is one, and where the lines go (tests pass both). */
export interface ConfirmIo {
  /** True when a person can answer (stdin and stderr are terminals). */
  interactive: boolean;
  ask(question: string): Promise<string>;
  write(line: string): void;
}

/** The process's terminal: a prompt on stderr, the answer from stdin. */
export function terminalIo(): ConfirmIo {
  return {
    interactive: Boolean(process.stdin.isTTY && process.stderr.isTTY),
    async ask(question) {
      const rl = createInterface({ input: process.stdin, output: process.stderr });
      try {
        return await rl.question(question);
      } finally {
        rl.close();
      }
    },
    write: (line) => process.stderr.write(`${line}\n`),
  };
}

const short = (v: string): string => (v.length > 60 ? `${v.slice(0, 59)}…` : v);

/**
 * Shows what a run folder not written by this user here would execute and gets a yes: the flag, or an
 * answer on the terminal; without either, one line naming the flag and nothing is run.
 */
export async function confirmRecorded(
  items: readonly ExecutedSetting[],
  folder: string,
  trusted: boolean,
  io: ConfirmIo,
): Promise<void> {
  if (items.length === 0) return;
  const why = `${folder} was not written by you on this machine, and its run.json sets what runs`;
  if (trusted) {
    io.write(`--from: ${why}; running it (${TRUST_FLAG}):`);
    for (const s of items) io.write(`  ${s.setting}: ${s.value}`);
    return;
  }
  if (!io.interactive) {
    const list = items.map((s) => `${s.setting} (${short(s.value)})`).join(', ');
    throw new UserError(`--from: ${why}: ${list}; read them in its run.json, then pass ${TRUST_FLAG} to run them`);
  }
  io.write(`--from: ${why}:`);
  for (const s of items) io.write(`  ${s.setting}: ${s.value}`);
  const answer = (await io.ask('Run these? [y/N] ')).trim().toLowerCase();
  if (answer !== 'y' && answer !== 'yes')
    throw new UserError(`--from: not confirmed, nothing was run (pass ${TRUST_FLAG} to run them without asking)`);
}
