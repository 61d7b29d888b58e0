import { readFileSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  MAX_EMBEDDED_FILE_BYTES,
  configMapFileName,
  k8sManifests,
  manifestsYaml,
  slurmScript,
} from '../core/distributed/launchers.js';
import { UserError } from '../core/errors.js';
import { argsErrorLine } from './args-error.js';
import { helpLine } from './field-flags.js';
import { wrapHelp } from './help-text.js';
import { benchConfigFromFlags, runOptions } from './run-options.js';

/** The `servebench run` arguments after `--`, checked as `run` would (a typo fails here, not on 64 nodes). */
function runArgs(positionals: string[], command: string): { args: string[]; values: Record<string, unknown> } {
  const [first, ...rest] = positionals;
  if (first !== 'run')
    throw new UserError(
      `servebench ${command} needs the benchmark after --: servebench ${command} ... -- run --url URL ...`,
    );
  const args = rest.filter((a) => a !== '--distributed');
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({ args, options: runOptions, strict: true, allowPositionals: false }));
  } catch (error) {
    throw new UserError(argsErrorLine(error as Error, 'run'));
  }
  for (const flag of ['rank', 'world-size', 'coordinator']) {
    if (values[flag] !== undefined)
      throw new UserError(`--${flag} is set by the launcher: drop it from the run arguments`);
  }
  return { args, values };
}

function whole(value: string | undefined, flag: string, fallback?: number): number {
  if (value === undefined && fallback !== undefined) return fallback;
  if (value === undefined || !/^\d+$/.test(value) || Number(value) < 1)
    throw new UserError(`--${flag} must be a whole number of at least 1`);
  return Number(value);
}

const SLURM_HELP = `Usage: servebench slurm --nodes N [options] -- run RUN_OPTIONS...

Prints an sbatch script that runs one benchmark from N nodes: every task is 'servebench run --distributed' with the
same options; Slurm gives each its rank, and rank 0 (the first node) writes the run folder. Submit it with sbatch.

${helpLine('--nodes N', 'nodes, one load generator each (required)')}
${helpLine('--tasks-per-node K', 'load generators per node (default 1)')}
${helpLine('--partition P', 'the partition to run in')}
${helpLine('--time T', 'the time limit (e.g. 01:00:00)')}
${helpLine('--job-name NAME', 'the job name (default servebench)')}`;

/** `servebench slurm`: an sbatch script for a distributed run. */
export async function slurmCommand(argv: string[]): Promise<number> {
  const options = {
    nodes: { type: 'string' },
    'tasks-per-node': { type: 'string' },
    partition: { type: 'string' },
    time: { type: 'string' },
    'job-name': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  } as const;
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UserError(argsErrorLine(error as Error, 'slurm'));
  }
  const v = parsed.values;
  if (v.help) {
    console.log(wrapHelp(SLURM_HELP));
    return 0;
  }
  const { args, values } = runArgs(parsed.positionals, 'slurm');
  benchConfigFromFlags(values, {});
  process.stdout.write(
    slurmScript({
      nodes: whole(v.nodes, 'nodes'),
      tasksPerNode: whole(v['tasks-per-node'], 'tasks-per-node', 1),
      partition: v.partition,
      time: v.time,
      jobName: v['job-name'] ?? 'servebench',
      runArgs: args,
    }),
  );
  return 0;
}

const K8S_HELP = `Usage: servebench k8s --workers N --image IMAGE [options] -- run RUN_OPTIONS...

Prints Kubernetes manifests that run one benchmark from N pods: an Indexed Job (JOB_COMPLETION_INDEX is the rank), a
headless Service through which the workers reach rank 0 by name, a ConfigMap holding the run configuration (and
small --prompts/--trace files) and a Secret with the rendezvous token. Apply them with kubectl apply -f -. Rank 0
writes the run folder to /results: a ReadWriteMany claim (--results-pvc), or its own pod, which then waits --hold
seconds so that 'kubectl cp' can fetch it. The project's Dockerfile builds the image.

${helpLine('--workers N', 'pods, one load generator each (required)')}
${helpLine('--image IMAGE', 'the servebench image (required)')}
${helpLine('--name NAME', 'name of the Job, Service and ConfigMap (default servebench)')}
${helpLine('--namespace NS', 'the namespace')}
${helpLine('--results-pvc CLAIM', 'a ReadWriteMany PersistentVolumeClaim mounted at /results in every pod')}
${helpLine('--hold S', "without a claim, how long rank 0's pod stays up after the run (default 3600)")}
${helpLine('--api-key-secret NAME', "a Secret whose key api-key is the server's API key")}
${helpLine('--cpu C', 'CPU request and limit per pod (e.g. 4)')}
${helpLine('--memory M', 'memory request and limit per pod (e.g. 8Gi)')}`;

/** Workload files small enough for the ConfigMap, by config key. */
function workloadFiles(config: { prompts?: string; trace?: string }): Record<string, [string, string]> {
  const out: Record<string, [string, string]> = {};
  for (const key of ['prompts', 'trace'] as const) {
    const path = config[key];
    if (path === undefined) continue;
    if (statSync(path).size > MAX_EMBEDDED_FILE_BYTES) {
      throw new UserError(
        `--${key} ${path} is over ${MAX_EMBEDDED_FILE_BYTES / 1024} KiB, too large for a ConfigMap: build it into the image (or a volume) and pass its path in the pod`,
      );
    }
    out[key] = [configMapFileName(path), readFileSync(path, 'utf8')];
  }
  return out;
}

/** `servebench k8s`: manifests for a distributed run. */
export async function k8sCommand(argv: string[]): Promise<number> {
  const options = {
    workers: { type: 'string' },
    image: { type: 'string' },
    name: { type: 'string' },
    namespace: { type: 'string' },
    'results-pvc': { type: 'string' },
    hold: { type: 'string' },
    'api-key-secret': { type: 'string' },
    cpu: { type: 'string' },
    memory: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  } as const;
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UserError(argsErrorLine(error as Error, 'k8s'));
  }
  const v = parsed.values;
  if (v.help) {
    console.log(wrapHelp(K8S_HELP));
    return 0;
  }
  if (!v.image)
    throw new UserError('--image is required: the servebench image the pods run (the project Dockerfile builds one)');
  const { values } = runArgs(parsed.positionals, 'k8s');
  const config = benchConfigFromFlags(values, {});
  const manifests = k8sManifests({
    name: v.name ?? 'servebench',
    namespace: v.namespace,
    workers: whole(v.workers, 'workers'),
    image: v.image,
    cpu: v.cpu,
    memory: v.memory,
    resultsPvc: v['results-pvc'],
    holdS: whole(v.hold, 'hold', 3600),
    apiKeySecret: v['api-key-secret'],
    config,
    files: workloadFiles(config),
  });
  process.stdout.write(manifestsYaml(manifests));
  return 0;
}
