import { dcgmUrls, type GpuSample } from '../../shared/telemetry.js';
import type { Clock } from '../clock.js';
import { createMonoClock } from '../clock.js';
import { nodeTagger } from './dcgm-nodes.js';
import { gpuSamplesFromDcgm, parseDcgmPage } from './dcgm-source.js';
import { createExecaRunner, type CommandRunner } from './exec.js';
import { describeHttpError, undiciGetText, type HttpGetText } from './http-get.js';
import { resolveNvidiaSmi } from './nvidia-smi-binary.js';
import { LOOP_FIELDS, parseLoopLine } from './nvidia-smi-fields.js';
import { probeFields } from './nvidia-smi-probe.js';
import { queryGpuInfo, queryGpuProcesses, type GpuInfo, type GpuProcess } from './nvidia-smi-static.js';
import { boundGpuSample } from './sample-bounds.js';

/** What `servebench gpu` shows: static facts, processes holding GPU memory, one sample per GPU. */
export interface GpuSnapshot {
  source: 'nvidia-smi' | 'dcgm';
  /** The nvidia-smi binary or the DCGM URL used. */
  from: string;
  gpus: GpuInfo[];
  /** null where the source cannot list processes (DCGM). */
  processes: GpuProcess[] | null;
  samples: GpuSample[];
  droppedFields: string[];
  /** With several DCGM exporters: the ones that could not be read, one line each (the others are shown). */
  unread?: string[];
}

type NodeRead = { ok: true; gpus: GpuInfo[]; samples: GpuSample[] } | { ok: false; reason: string };

// One exporter's GPUs and their sample, or why it gave none.
async function readDcgmNode(url: string, get: HttpGetText, clock: Clock): Promise<NodeRead> {
  try {
    const res = await get(url, { timeoutMs: 5_000 });
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
    const page = await parseDcgmPage(res.body);
    const samples = gpuSamplesFromDcgm(page, clock.nowMs()).map(boundGpuSample);
    if (!samples.length) throw new Error('no DCGM_FI_DEV_* metrics with a gpu label');
    const labels = page.samples.filter((s) => s.name.startsWith('DCGM_FI_DEV_'));
    const gpus: GpuInfo[] = samples.map((s) => {
      const l = labels.find((x) => x.labels.gpu === String(s.gpu))?.labels;
      return {
        index: s.gpu,
        name: l?.modelName ?? null,
        uuid: l?.UUID ?? null,
        busId: l?.pci_bus_id ?? null,
        driver: l?.DCGM_FI_DRIVER_VERSION ?? null,
        cudaVersion: null,
        memoryMiB: s.memTotalMiB,
        powerLimitW: s.powerLimitW,
        maxSmClockMhz: s.maxSmClockMhz,
        maxMemClockMhz: null,
      };
    });
    return { ok: true, gpus, samples };
  } catch (error) {
    return { ok: false, reason: `DCGM exporter at ${url} gave no GPU metrics (${describeHttpError(error)})` };
  }
}

// Every exporter read at once; with several, each GPU is numbered across nodes and names its node (as a run does).
async function readDcgmSnapshot(
  urls: readonly string[],
  get: HttpGetText,
  clock: Clock,
): Promise<{ ok: true; snapshot: GpuSnapshot } | { ok: false; reason: string }> {
  const reads = await Promise.all(urls.map((url) => readDcgmNode(url, get, clock)));
  const tag = nodeTagger(urls);
  const gpus: GpuInfo[] = [];
  const samples: GpuSample[] = [];
  const unread: string[] = [];
  reads.forEach((r, i) => {
    const url = urls[i]!;
    if (!r.ok) return void unread.push(r.reason);
    const tagged = r.samples.map((x) => tag(url, x));
    samples.push(...tagged);
    r.gpus.forEach((g, j) =>
      gpus.push({ ...g, index: tagged[j]!.gpu, ...(tagged[j]!.node ? { node: tagged[j]!.node } : {}) }),
    );
  });
  if (samples.length === 0) return { ok: false, reason: `${unread.join('; ')}; check --dcgm-url` };
  const snapshot: GpuSnapshot = {
    source: 'dcgm',
    from: urls.join(', '),
    gpus,
    processes: null,
    samples,
    droppedFields: [],
  };
  return { ok: true, snapshot: unread.length > 0 ? { ...snapshot, unread } : snapshot };
}

/** Reads one snapshot, or says in one line why it cannot (naming the fix). */
export async function readGpuSnapshot(options: {
  nvidiaSmiPath?: string;
  dcgmUrl?: string;
  env?: NodeJS.ProcessEnv;
  exec?: CommandRunner;
  fetch?: HttpGetText;
  clock?: Clock;
}): Promise<{ ok: true; snapshot: GpuSnapshot } | { ok: false; reason: string }> {
  const clock = options.clock ?? createMonoClock();
  if (options.dcgmUrl) return readDcgmSnapshot(dcgmUrls(options.dcgmUrl), options.fetch ?? undiciGetText, clock);
  const env = options.env ?? process.env;
  const location = resolveNvidiaSmi(options.nvidiaSmiPath, env);
  if (!location.found) return { ok: false, reason: location.reason };
  const runner = options.exec ?? createExecaRunner();
  const probe = await probeFields(runner, location.path, LOOP_FIELDS, env);
  if (!probe.ok) return { ok: false, reason: probe.reason };
  const tMs = clock.nowMs();
  const facts = await queryGpuInfo(runner, location.path, env);
  const gpus = facts.ok ? facts.gpus : [];
  const maxFor = (i: number) => gpus.find((g) => g.index === i)?.maxSmClockMhz ?? null;
  const samples = probe.lines
    .map((l) => parseLoopLine(l, probe.fields, tMs, maxFor))
    .filter((s): s is GpuSample => s !== null)
    .map(boundGpuSample);
  const procs = await queryGpuProcesses(runner, location.path, env);
  return {
    ok: true,
    snapshot: {
      source: 'nvidia-smi',
      from: location.path,
      gpus,
      processes: procs.ok ? procs.processes : null,
      samples,
      droppedFields: probe.fields.dropped,
    },
  };
}
