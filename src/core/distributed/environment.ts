import { hostname } from 'node:os';
import { UserError } from '../errors.js';

/** Workers in one run at most: more than any endpoint needs, and each holds a connection to rank 0. */
const MAX_WORLD_SIZE = 1024;
/** Rank 0's rendezvous port when neither a flag nor the launcher says (PyTorch's is 29500; this one is ours). */
export const DEFAULT_COORDINATOR_PORT = 29517;

/** What the command line said about this process's place in a distributed run (each overrides the environment). */
export interface DistributedFlags {
  rank?: number;
  worldSize?: number;
  /** HOST:PORT of rank 0's rendezvous. */
  coordinator?: string;
}

/** This process's place in a distributed run, and how it was found. */
export interface DistributedIdentity {
  rank: number;
  worldSize: number;
  coordinator: { host: string; port: number };
  /** Where rank and world size came from. */
  launcher: 'slurm' | 'kubernetes' | 'torch' | 'flags';
  /** The name this worker goes by in the per-worker view: the Slurm node or the pod, else the host name. */
  host: string;
}

/** Expands a Slurm node list (`n[1-3],gpu7`) to host names, as `scontrol show hostnames` does. */
export type ExpandNodeList = (nodeList: string) => Promise<string[]>;

function integer(value: string | undefined, what: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^\d+$/.test(value))
    throw new UserError(`${what} is '${value}', not a whole number: check the launcher's environment`);
  return Number(value);
}

/** HOST:PORT (IPv6 as [addr]:port) -> its parts; one line naming the fix on anything else. */
function parseCoordinator(text: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port < 1 || port > 65535) {
    throw new UserError(`--coordinator must be HOST:PORT (e.g. node1:${DEFAULT_COORDINATOR_PORT}), got '${text}'`);
  }
  return { host: (m[1] ?? m[2]) as string, port };
}

/** Port from the environment, else one per Slurm job (two jobs sharing a node must not meet), else the default. */
function defaultPort(env: NodeJS.ProcessEnv): number {
  const given = integer(env.SERVEBENCH_COORDINATOR_PORT, 'SERVEBENCH_COORDINATOR_PORT');
  if (given !== undefined) return given;
  const job = integer(env.SLURM_JOB_ID, 'SLURM_JOB_ID');
  return job !== undefined ? 20_000 + (job % 10_000) : DEFAULT_COORDINATOR_PORT;
}

/**
 * Finds rank, world size and rank 0's address the way PyTorch's launchers do: flags first, then Slurm (SLURM_PROCID,
 * SLURM_NTASKS, the first host of the step's node list), an Indexed Job (JOB_COMPLETION_INDEX, with
 * SERVEBENCH_WORLD_SIZE and SERVEBENCH_COORDINATOR from its manifest), or torchrun's RANK/WORLD_SIZE/MASTER_ADDR.
 */
export async function discoverIdentity(
  flags: DistributedFlags,
  env: NodeJS.ProcessEnv,
  expandNodeList: ExpandNodeList,
): Promise<DistributedIdentity> {
  const slurm = env.SLURM_PROCID !== undefined;
  const k8s = env.JOB_COMPLETION_INDEX !== undefined;
  const torch = env.RANK !== undefined && env.WORLD_SIZE !== undefined;
  const rank =
    flags.rank ??
    integer(env.SLURM_PROCID, 'SLURM_PROCID') ??
    integer(env.JOB_COMPLETION_INDEX, 'JOB_COMPLETION_INDEX') ??
    integer(env.RANK, 'RANK');
  const worldSize =
    flags.worldSize ??
    integer(env.SERVEBENCH_WORLD_SIZE, 'SERVEBENCH_WORLD_SIZE') ??
    integer(env.SLURM_NTASKS, 'SLURM_NTASKS') ??
    integer(env.WORLD_SIZE, 'WORLD_SIZE');
  if (rank === undefined || worldSize === undefined) {
    throw new UserError(
      '--distributed found no rank or world size: start it under srun or an Indexed Job, or pass --rank R --world-size N --coordinator HOST:PORT',
    );
  }
  if (worldSize < 1 || worldSize > MAX_WORLD_SIZE) {
    throw new UserError(`world size ${worldSize} is outside 1..${MAX_WORLD_SIZE}: check --world-size or the launcher`);
  }
  if (rank >= worldSize)
    throw new UserError(`rank ${rank} is not below the world size ${worldSize}: check --rank and --world-size`);
  let coordinator: { host: string; port: number } | undefined;
  const given = flags.coordinator ?? env.SERVEBENCH_COORDINATOR;
  if (given !== undefined) coordinator = parseCoordinator(given);
  else if (slurm) {
    const list = env.SLURM_STEP_NODELIST ?? env.SLURM_JOB_NODELIST;
    const first = list ? (await expandNodeList(list))[0] : undefined;
    if (!first) throw new UserError('Slurm gave no node list (SLURM_JOB_NODELIST): pass --coordinator HOST:PORT');
    coordinator = { host: first, port: defaultPort(env) };
  } else if (env.MASTER_ADDR) {
    coordinator = { host: env.MASTER_ADDR, port: integer(env.MASTER_PORT, 'MASTER_PORT') ?? defaultPort(env) };
  }
  if (!coordinator) throw new UserError("--distributed needs rank 0's address: pass --coordinator HOST:PORT");
  const launcher =
    flags.rank !== undefined ? 'flags' : slurm ? 'slurm' : k8s ? 'kubernetes' : torch ? 'torch' : 'flags';
  return {
    rank,
    worldSize,
    coordinator,
    launcher,
    host: env.SLURMD_NODENAME ?? env.HOSTNAME ?? hostname(),
  };
}
