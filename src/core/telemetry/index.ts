/** GPU, engine and client telemetry: the public surface of src/core/telemetry. */
export { createTelemetryRecorder, type TelemetryRecorderImpl, type TelemetryRecorderOptions } from './recorder.js';
export { explainSpread, SPREAD_THRESHOLD, type SpreadInput, type SpreadRound } from './explain-spread.js';
export { formatTelemetryLines, telemetryLineObjects, type TelemetryLine } from './telemetry-lines.js';
export { summarizeTelemetry, integratePowerJ, counterDelta, type SummarizeInput } from './summarize.js';
export {
  classifyThrottle,
  describeThrottleMask,
  findEpisodes,
  clockRatio,
  THROTTLE_BITS,
  THERMAL_MASK,
  HW_SLOWDOWN_MASK,
} from './throttle.js';
export { readGpuSnapshot, type GpuSnapshot } from './gpu-snapshot.js';
export { readHostInfo, type HostInfo } from './host-info.js';
export { resolveNvidiaSmi, NVIDIA_SMI_FIX } from './nvidia-smi-binary.js';
export type { GpuInfo, GpuProcess } from './nvidia-smi-static.js';
export type { TelemetryRecorder, TelemetryGap, GpuProcessSnapshot } from './types.js';
export { parsePrometheusText, sumMetric, getHistogram, type PromText, type PromSample } from './prometheus-parser.js';
export { engineSampleFromMetrics } from './engine-metrics.js';
export { gpuSamplesFromDcgm } from './dcgm-source.js';
