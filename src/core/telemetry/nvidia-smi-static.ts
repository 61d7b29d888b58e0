import type { CommandRunner } from './exec.js';
import { cell, STATIC_FIELDS } from './nvidia-smi-fields.js';
import { describeSmiFailure, probeFields, SMI_TIMEOUT_MS, type SmiFailure } from './nvidia-smi-probe.js';
import { parseSmiNumber, parseSmiText, splitSmiCsv } from './nvidia-smi-values.js';
import { boundGpuFacts } from './sample-bounds.js';

/** Facts about one GPU that do not change during a run. */
export interface GpuInfo {
  index: number;
  name: string | null;
  uuid: string | null;
  busId: string | null;
  driver: string | null;
  cudaVersion: string | null;
  memoryMiB: number | null;
  powerLimitW: number | null;
  maxSmClockMhz: number | null;
  maxMemClockMhz: number | null;
  /** Values nvidia-smi gave that no GPU has ("enforced.power.limit 1e+308 W"), left out above; absent when none. */
  rejected?: string[];
  /** With several DCGM exporters: the node (exporter host:port) the GPU is on. */
  node?: string;
}

/** A process holding GPU memory (from --query-compute-apps). */
export interface GpuProcess {
  pid: number;
  name: string;
  usedMemoryMiB: number | null;
}

/** The CUDA version from nvidia-smi's banner ("CUDA Version: 12.2"), or null. */
export function parseCudaVersion(banner: string): string | null {
  return /CUDA Version\s*:\s*([0-9]+(?:\.[0-9]+)*)/i.exec(banner)?.[1] ?? null;
}

/** The driver version from nvidia-smi's banner, or null. */
function parseBannerDriver(banner: string): string | null {
  return /Driver Version\s*:\s*([0-9]+(?:\.[0-9]+)*)/i.exec(banner)?.[1] ?? null;
}

/** Static facts for every GPU: probed --query-gpu for name, driver, memory, limits; the banner for CUDA. */
export async function queryGpuInfo(
  runner: CommandRunner,
  binary: string,
  env?: NodeJS.ProcessEnv,
  signal?: AbortSignal,
): Promise<{ ok: true; gpus: GpuInfo[] } | SmiFailure> {
  const probe = await probeFields(runner, binary, STATIC_FIELDS, env, signal);
  if (!probe.ok) return probe;
  const banner = await runner.run(binary, [], { env, timeoutMs: SMI_TIMEOUT_MS, ...(signal ? { signal } : {}) });
  const cuda = banner.exitCode === 0 ? parseCudaVersion(banner.stdout) : null;
  const gpus: GpuInfo[] = [];
  probe.lines.forEach((line, i) => {
    const cells = splitSmiCsv(line);
    const get = (name: string) => cell(probe.fields, cells, name);
    const { facts, rejected } = boundGpuFacts({
      memoryMiB: parseSmiNumber(get('memory.total')),
      powerLimitW: parseSmiNumber(get('enforced.power.limit')),
      maxSmClockMhz: parseSmiNumber(get('clocks.max.sm')),
      maxMemClockMhz: parseSmiNumber(get('clocks.max.mem')),
    });
    gpus.push({
      index: parseSmiNumber(get('index')) ?? i,
      name: parseSmiText(get('name')),
      uuid: parseSmiText(get('uuid')),
      busId: parseSmiText(get('pci.bus_id')),
      driver: parseSmiText(get('driver_version')) ?? (banner.exitCode === 0 ? parseBannerDriver(banner.stdout) : null),
      cudaVersion: cuda,
      ...facts,
      ...(rejected.length > 0 ? { rejected } : {}),
    });
  });
  return { ok: true, gpus };
}

/** Parses `--query-compute-apps=pid,process_name,used_memory --format=csv,noheader,nounits` output. */
export function parseComputeApps(stdout: string): GpuProcess[] {
  const processes: GpuProcess[] = [];
  for (const line of stdout.split('\n')) {
    const cells = splitSmiCsv(line);
    if (cells.length < 3) continue;
    const pid = Number(cells[0]);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    processes.push({
      pid,
      name: parseSmiText(cells.slice(1, -1).join(', ')) ?? '[unknown]',
      usedMemoryMiB: parseSmiNumber(cells[cells.length - 1]),
    });
  }
  return processes;
}

/** The processes holding GPU memory right now (other processes distort a benchmark). */
export async function queryGpuProcesses(
  runner: CommandRunner,
  binary: string,
  env?: NodeJS.ProcessEnv,
  signal?: AbortSignal,
): Promise<{ ok: true; processes: GpuProcess[] } | SmiFailure> {
  const result = await runner.run(
    binary,
    ['--query-compute-apps=pid,process_name,used_memory', '--format=csv,noheader,nounits'],
    { env, timeoutMs: SMI_TIMEOUT_MS, ...(signal ? { signal } : {}) },
  );
  const failure = describeSmiFailure(result);
  if (failure) return { ok: false, reason: failure };
  if (result.exitCode !== 0)
    return { ok: false, reason: `nvidia-smi could not list GPU processes (exit ${result.exitCode})` };
  return { ok: true, processes: parseComputeApps(result.stdout) };
}

/** "1234 python3 (20480 MiB)". */
export function formatGpuProcess(p: GpuProcess): string {
  return `${p.pid} ${p.name}${p.usedMemoryMiB === null ? '' : ` (${p.usedMemoryMiB} MiB)`}`;
}
