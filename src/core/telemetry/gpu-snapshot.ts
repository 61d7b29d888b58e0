import type { GpuSample } from '../../shared/telemetry.js';
import type { Clock } from '../clock.js';
import { createMonoClock } from '../clock.js';
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
  if (options.dcgmUrl) {
    const get = options.fetch ?? undiciGetText;
    try {
      const res = await get(options.dcgmUrl, { timeoutMs: 5_000 });
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
      const page = await parseDcgmPage(res.body);
      const samples = gpuSamplesFromDcgm(page, clock.nowMs()).map(boundGpuSample);
      if (!samples.length) throw new Error('no DCGM_FI_DEV_* metrics with a gpu label');
      const gpus: GpuInfo[] = samples.map((s) => ({
        index: s.gpu,
        name: null,
        uuid: null,
        busId: null,
        driver: null,
        cudaVersion: null,
        memoryMiB: s.memTotalMiB,
        powerLimitW: s.powerLimitW,
        maxSmClockMhz: s.maxSmClockMhz,
        maxMemClockMhz: null,
      }));
      const labels = page.samples.filter((s) => s.name.startsWith('DCGM_FI_DEV_'));
      for (const g of gpus) {
        const l = labels.find((s) => s.labels.gpu === String(g.index))?.labels;
        g.name = l?.modelName ?? null;
        g.uuid = l?.UUID ?? null;
        g.driver = l?.DCGM_FI_DRIVER_VERSION ?? null;
        g.busId = l?.pci_bus_id ?? null;
      }
      return {
        ok: true,
        snapshot: { source: 'dcgm', from: options.dcgmUrl, gpus, processes: null, samples, droppedFields: [] },
      };
    } catch (error) {
      return {
        ok: false,
        reason: `DCGM exporter at ${options.dcgmUrl} gave no GPU metrics (${describeHttpError(error)}); check --dcgm-url`,
      };
    }
  }
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
