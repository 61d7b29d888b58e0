import type { BenchmarkDeps } from './benchmark.js';
import { resourcePath } from './package-root.js';
import { startServer } from './servers/manager.js';
import { readHostInfo } from './telemetry/host-info.js';
import { createTelemetryRecorder } from './telemetry/recorder.js';

/**
 * Which nvidia-smi a run reads: an explicit --nvidia-smi always wins; else, in demo mode, the simulator's
 * fake GPU (read by the fake nvidia-smi) stands in for a card; else the usual lookup (env, PATH).
 */
export function gpuSource(
  nvidiaSmiPath: string | undefined,
  gpuStateFile: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): { nvidiaSmiPath?: string; env: NodeJS.ProcessEnv } {
  if (nvidiaSmiPath || !gpuStateFile) return { nvidiaSmiPath, env };
  return { nvidiaSmiPath: resourcePath('fake-nvidia-smi'), env: { ...env, SERVEBENCH_FAKE_GPU_STATE: gpuStateFile } };
}

/** The real collaborators of a run: process-owning servers, nvidia-smi/DCGM/engine telemetry, host facts. */
export function defaultBenchmarkDeps(): Omit<BenchmarkDeps, 'onEvent' | 'signal'> {
  return {
    startServer,
    hostInfo: async () => {
      const h = await readHostInfo();
      return { cpu: h.cpu ?? undefined, cpus: h.cores, memoryGiB: h.memoryGiB ?? undefined, os: h.os };
    },
    createTelemetry: (o) =>
      createTelemetryRecorder({
        clock: o.clock,
        metricsUrl: o.metricsUrl,
        engine: o.engine,
        dcgmUrl: o.dcgmUrl,
        intervalMs: o.intervalMs,
        onGpuSample: o.onGpuSample,
        onEngineSample: o.onEngineSample,
        onClientSample: o.onClientSample,
        ownPids: o.ownPids,
        signal: o.signal,
        onIssue: o.onIssue,
        ...gpuSource(o.nvidiaSmiPath, o.gpuStateFile),
      }),
  };
}
