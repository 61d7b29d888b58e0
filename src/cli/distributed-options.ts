import { execa } from 'execa';
import type { ParseArgsConfig } from 'node:util';
import { UserError } from '../core/errors.js';
import { discoverIdentity, type DistributedIdentity } from '../core/distributed/environment.js';
import { sectionsHelp, type HelpSection } from './field-flags.js';

/**
 * `servebench run` flags of a distributed run. They say where this process stands (its rank, rank 0's address), not
 * what the benchmark is, so they are launcher options beside --config and --vary, not settings recorded in run.json.
 */
export const distributedOptions = {
  distributed: { type: 'boolean' },
  rank: { type: 'string' },
  'world-size': { type: 'string' },
  coordinator: { type: 'string' },
  'barrier-timeout': { type: 'string' },
} satisfies NonNullable<ParseArgsConfig['options']>;

/** Default wait for every worker to join, and at each barrier (seconds). */
const DEFAULT_BARRIER_TIMEOUT_S = 600;

/** The distributed flags' part of `servebench run --help` and of the CLI reference. */
export const DISTRIBUTED_SECTION: HelpSection = {
  title: 'Distributed (one run from many load generators; docs/distributed.md)',
  fields: [],
  extra: [
    [
      '--distributed',
      'one of several processes of one run: rank 0 hosts the rendezvous and writes the run folder, every rank sends its share of each level; rank and world size come from Slurm (srun), an Indexed Job or torchrun',
    ],
    ['--rank R', "this process's rank (0 = rank 0), over the launcher's"],
    ['--world-size N', "how many processes run the load, over the launcher's"],
    [
      '--coordinator HOST:PORT',
      "rank 0's rendezvous (default: the first host of the Slurm step, port 20000 + job id % 10000; SERVEBENCH_COORDINATOR)",
    ],
    [
      '--barrier-timeout S',
      `how long rank 0 waits for a worker to join or reach a batch (default ${DEFAULT_BARRIER_TIMEOUT_S})`,
    ],
  ],
};

export const DISTRIBUTED_OPTIONS_HELP = sectionsHelp([DISTRIBUTED_SECTION]);

function whole(values: Record<string, unknown>, flag: string, min: number): number | undefined {
  const v = values[flag];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^\d+$/.test(v) || Number(v) < min) {
    throw new UserError(`--${flag} must be a whole number of at least ${min} (got '${String(v)}')`);
  }
  return Number(v);
}

/** `scontrol show hostnames LIST`: Slurm's own expansion of a node list. */
async function slurmHostnames(list: string): Promise<string[]> {
  try {
    const { stdout } = await execa('scontrol', ['show', 'hostnames', list], { timeout: 30_000 });
    return stdout
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
  } catch {
    throw new UserError(
      `cannot expand the Slurm node list '${list}' with 'scontrol show hostnames': pass --coordinator HOST:PORT`,
    );
  }
}

/** What the distributed flags ask: null for a run from one process. */
export interface DistributedRequest {
  identity: DistributedIdentity;
  timeoutMs: number;
  token?: string;
}

/** The distributed flags, resolved against the launcher's environment; null without --distributed. */
export async function distributedRequest(
  values: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): Promise<DistributedRequest | null> {
  const given = ['rank', 'world-size', 'coordinator', 'barrier-timeout'].filter((f) => values[f] !== undefined);
  if (!values.distributed) {
    if (given.length > 0) throw new UserError(`--${given[0]} belongs to a distributed run: add --distributed`);
    return null;
  }
  const identity = await discoverIdentity(
    {
      rank: whole(values, 'rank', 0),
      worldSize: whole(values, 'world-size', 1),
      coordinator: typeof values.coordinator === 'string' ? values.coordinator : undefined,
    },
    env,
    slurmHostnames,
  );
  const timeoutS = whole(values, 'barrier-timeout', 1) ?? DEFAULT_BARRIER_TIMEOUT_S;
  return {
    identity,
    timeoutMs: timeoutS * 1000,
    ...(env.SERVEBENCH_DIST_TOKEN ? { token: env.SERVEBENCH_DIST_TOKEN } : {}),
  };
}
