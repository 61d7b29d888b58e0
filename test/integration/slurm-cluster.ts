import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

// A real Slurm cluster on this machine, for tests: one munged, one slurmctld and one slurmd per node, each node its
// own name (n1..nN, in /etc/hosts) on loopback with its own port (slurmd -N), every daemon a child of the test that
// stops it by its pid. Needs root and Debian's slurm-wlm and munge (.ci/run installs them).

const TOOLS = ['munged', 'mungekey', 'slurmctld', 'slurmd', 'srun', 'salloc', 'scancel', 'scontrol', 'squeue'];

/** Why a Slurm cluster cannot run here, or null when it can. */
export function slurmUnavailable(): string | null {
  if (process.platform !== 'linux') return 'Slurm runs on Linux only';
  const missing = TOOLS.filter((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0);
  if (missing.length > 0)
    return `slurm-wlm and munge are not installed (no ${missing.join(', ')}): apt-get install slurm-wlm munge`;
  if (process.getuid?.() !== 0) return 'slurmd must run as root here: run the tests as root';
  return null;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** A running cluster: its config for every Slurm command, and its stop. */
export interface SlurmCluster {
  dir: string;
  nodes: string[];
  env: NodeJS.ProcessEnv;
  /** Runs a Slurm command with the cluster's config; its output. */
  run(cmd: string, args: string[]): { status: number | null; stdout: string; stderr: string };
  stop(): Promise<void>;
}

function ensureHosts(nodes: string[]): void {
  const hosts = readFileSync('/etc/hosts', 'utf8');
  const missing = nodes.filter((n) => !new RegExp(`\\s${n}(\\s|$)`, 'm').test(hosts));
  if (missing.length > 0) appendFileSync('/etc/hosts', `\n127.0.0.1 ${missing.join(' ')}\n`);
}

function slurmConf(dir: string, nodes: string[], ctldPort: number, ports: number[]): string {
  return [
    'ClusterName=sbtest',
    'SlurmctldHost=localhost(127.0.0.1)',
    `SlurmctldPort=${ctldPort}`,
    'AuthType=auth/munge',
    `AuthInfo=socket=${join(dir, 'munge.socket')}`,
    'CredType=cred/munge',
    'SlurmUser=root',
    'SlurmdUser=root',
    `StateSaveLocation=${join(dir, 'state')}`,
    `SlurmdSpoolDir=${join(dir, 'spool', '%n')}`,
    `SlurmctldPidFile=${join(dir, 'slurmctld.pid')}`,
    `SlurmdPidFile=${join(dir, 'slurmd-%n.pid')}`,
    'ProctrackType=proctrack/pgid',
    'TaskPlugin=task/none',
    'SelectType=select/cons_tres',
    'SelectTypeParameters=CR_CPU',
    'SchedulerType=sched/builtin',
    'ReturnToService=2',
    // Each slurmd takes the node's name from -N and its port from its own line.
    'SlurmdParameters=config_overrides',
    'MpiDefault=none',
    'JobAcctGatherType=jobacct_gather/none',
    'AccountingStorageType=accounting_storage/none',
    `SlurmctldLogFile=${join(dir, 'slurmctld.log')}`,
    `SlurmdLogFile=${join(dir, 'slurmd-%n.log')}`,
    'KillWait=5',
    ...nodes.map((n, i) => `NodeName=${n} NodeAddr=127.0.0.1 Port=${ports[i]} CPUs=4 State=UNKNOWN`),
    // Oversubscribed: every task of every test shares this machine's cores.
    `PartitionName=debug Nodes=${nodes.join(',')} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE`,
    '',
  ].join('\n');
}

function waitFor(check: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const tick = (): void => {
      if (check()) return resolve();
      if (Date.now() > deadline) return reject(new Error(`the Slurm test cluster did not come up: ${what}`));
      setTimeout(tick, 250);
    };
    tick();
  });
}

/** Starts munged, slurmctld and one slurmd per node in `dir`; resolves once every node is idle. */
export async function startSlurmCluster(dir: string, count = 3): Promise<SlurmCluster> {
  const nodes = Array.from({ length: count }, (_, i) => `n${i + 1}`);
  ensureHosts(nodes);
  for (const d of ['state', 'spool']) mkdirSync(join(dir, d), { recursive: true });
  const ports = await Promise.all(nodes.map(() => freePort()));
  const conf = join(dir, 'slurm.conf');
  writeFileSync(conf, slurmConf(dir, nodes, await freePort(), ports));
  const env = { ...process.env, SLURM_CONF: conf };
  const children: ChildProcess[] = [];
  const daemon = (cmd: string, args: string[]): void => {
    const child = spawn(cmd, args, { env, stdio: 'ignore' });
    child.on('error', () => undefined);
    children.push(child);
  };
  const key = join(dir, 'munge.key');
  spawnSync('mungekey', ['--create', `--keyfile=${key}`], { stdio: 'ignore' });
  chmodSync(key, 0o600);
  const socket = join(dir, 'munge.socket');
  daemon('munged', [
    '-F',
    '--force',
    `--key-file=${key}`,
    `--socket=${socket}`,
    `--pid-file=${join(dir, 'munged.pid')}`,
    `--log-file=${join(dir, 'munged.log')}`,
    `--seed-file=${join(dir, 'munge.seed')}`,
  ]);
  const run: SlurmCluster['run'] = (cmd, args) => {
    const r = spawnSync(cmd, args, { env, encoding: 'utf8', timeout: 60_000 });
    return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
  };
  const stop = async (): Promise<void> => {
    run('scancel', ['--user=root']);
    for (const child of children.reverse()) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(timer);
    }
  };
  try {
    await waitFor(() => spawnSync('test', ['-S', socket]).status === 0, 'munged made no socket', 20_000);
    daemon('slurmctld', ['-D', '-i']);
    for (const n of nodes) daemon('slurmd', ['-D', '-N', n]);
    await waitFor(
      () => {
        const r = run('sinfo', ['-h', '-o', '%T %D']);
        return r.status === 0 && r.stdout.trim() === `idle ${count}`;
      },
      `sinfo never showed ${count} idle nodes (see ${dir}/*.log)`,
      60_000,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { dir, nodes, env, run, stop };
}
