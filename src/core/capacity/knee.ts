import type { Saturation } from '../../shared/capacity.js';
import type { LevelResult } from '../../shared/run-record.js';

/** Throughput counts as flat when it grows by less than this share of the load's growth. */
const FLAT_EFFICIENCY = 0.25;
/** Latency counts as climbing when its median grows by more than this share. */
const LATENCY_CLIMB = 0.1;

const pct = (x: number): string => `${x >= 0 ? '+' : ''}${Math.round(x * 100)} %`;

/** The level's throughput: req/s in the open loop (it follows the rate until saturation), else output tok/s. */
function throughputOf(level: LevelResult): number | null {
  return level.rate !== undefined ? level.reqPerSec : level.outputTokPerSec;
}

/**
 * The knee of a series of levels (any loads, sorted here): the first level after which throughput rose by less than a
 * quarter of the load's rise while the E2E median climbed by more than 10 %. The next level's engine telemetry names
 * the cause: KV-cache preemptions, requests waiting in the engine's queue, or neither (steps just got slower).
 */
export function findSaturation(points: ReadonlyArray<{ load: number; level: LevelResult }>): Saturation | null {
  const sorted = [...points].sort((a, b) => a.load - b.load);
  for (let i = 0; i + 1 < sorted.length; i++) {
    const a = sorted[i]!;
    const b = sorted[i + 1]!;
    const ta = throughputOf(a.level);
    const tb = throughputOf(b.level);
    const la = a.level.e2eMs.p50;
    const lb = b.level.e2eMs.p50;
    if (ta === null || tb === null || la === null || lb === null || !(ta > 0) || !(la > 0) || !(a.load > 0)) continue;
    const throughputGain = (tb - ta) / ta;
    const loadGain = (b.load - a.load) / a.load;
    const latencyGain = (lb - la) / la;
    if (throughputGain >= FLAT_EFFICIENCY * loadGain || latencyGain <= LATENCY_CLIMB) continue;
    const t = b.level.telemetry;
    const waiting = t?.waitingPeak ?? null;
    const preemptions = t?.preemptions ?? null;
    let cause: Saturation['cause'] = 'unknown';
    let why = 'no engine metrics to tell queueing from slower steps';
    if (preemptions !== null && preemptions > 0) {
      cause = 'kv-cache';
      why = `${preemptions} KV-cache preemptions${waiting ? `, up to ${waiting} requests waiting` : ''}`;
    } else if (waiting !== null && waiting > 0) {
      cause = 'queue';
      why = `up to ${waiting} requests waiting in the engine's queue`;
    } else if (waiting !== null || preemptions !== null) {
      cause = 'compute';
      why = 'no queue and no preemptions: each step just got slower with the batch';
    }
    const unit = a.level.rate !== undefined ? 'req/s' : 'out tok/s';
    return {
      load: a.load,
      nextLoad: b.load,
      throughputGain,
      latencyGain,
      cause,
      detail: `${unit} ${pct(throughputGain)} for ${pct(loadGain)} load, E2E p50 ${pct(latencyGain)}: ${why}`,
    };
  }
  return null;
}
