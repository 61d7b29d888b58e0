import type { ClientSample, EngineSample, GpuSample } from '../../shared/telemetry.js';
import { counterDelta, processesInWindow } from './summarize.js';
import { clockRatio } from './throttle.js';
import type { GpuProcessSnapshot } from './types.js';

/** Round CV above which the spread needs explaining (over 15 % the environment is wrong). */
const SPREAD_THRESHOLD = 0.15;
/** Event-loop lag that means the client itself was saturated. */
const CLIENT_LAG_MS = 50;
/** CPU % below which a lagging client was not busy itself (a saturated one runs near 100 %). */
const CLIENT_WORKING_CPU_PCT = 50;

/** One round's window and throughput. */
interface SpreadRound {
  round: number;
  startMs: number;
  endMs: number;
  outputTokPerSec?: number;
}

/** Inputs of explainSpread: the rounds and all samples of the run. */
export interface SpreadInput {
  roundCv: number | null;
  rounds: readonly SpreadRound[];
  gpuSamples: readonly GpuSample[];
  engineSamples: readonly EngineSample[];
  clientSamples: readonly ClientSample[];
  processSnapshots?: readonly GpuProcessSnapshot[];
  /** False when there was no GPU source (the sentence says so). */
  gpuAvailable?: boolean;
  threshold?: number;
}

const pct = (x: number) => `${Math.round(x * 100)} %`;

function roundFindings(input: SpreadInput, r: SpreadRound): string[] {
  const found: string[] = [];
  const inRound = <T extends { tMs: number }>(xs: readonly T[]) =>
    xs.filter((s) => s.tMs >= r.startMs && s.tMs <= r.endMs);
  const gpu = inRound(input.gpuSamples);
  if (gpu.length) {
    const share = (cls: string) => gpu.filter((s) => s.class === cls).length / gpu.length;
    const ratios = gpu.map(clockRatio).filter((x): x is number => x !== null);
    const low = ratios.length ? ` (clock down to ${pct(Math.min(...ratios))} of max)` : '';
    const thermal = share('thermal');
    const hw = share('hw-slowdown');
    const cap = share('power-cap');
    if (thermal > 0) found.push(`thermal slowdown ${pct(thermal)} of the round${low}`);
    if (hw > 0) found.push(`hardware slowdown / power brake ${pct(hw)} of the round${low}`);
    if (cap >= 0.05 && thermal === 0 && hw === 0) found.push(`power-capped ${pct(cap)} of the round`);
  }
  const pre = counterDelta(
    input.engineSamples.map((s) => ({ tMs: s.tMs, value: s.preemptionsTotal })),
    r.startMs,
    r.endMs,
  );
  if (pre !== null && pre > 0) found.push(`${Math.round(pre)} preemption${pre === 1 ? '' : 's'}`);
  if (input.processSnapshots) {
    const others = processesInWindow(input.processSnapshots, r.startMs, r.endMs);
    if (others.length) found.push(`other GPU process${others.length === 1 ? '' : 'es'}: ${others.join(', ')}`);
  }
  const client = inRound(input.clientSamples);
  if (client.length) {
    const lag = Math.max(...client.map((c) => c.loopLagMs));
    const cpu = Math.max(...client.map((c) => c.cpuPct));
    // A loop that lagged while this process hardly used the CPU was waiting for one, not working: the host's doing.
    if (lag >= CLIENT_LAG_MS && cpu < CLIENT_WORKING_CPU_PCT) {
      found.push(
        `the host was busy (event-loop lag up to ${Math.round(lag)} ms while this process used only ${Math.round(cpu)} % CPU: it waited for one)`,
      );
    } else if (lag >= CLIENT_LAG_MS || cpu >= 95) {
      found.push(`client saturated (event-loop lag up to ${Math.round(lag)} ms, CPU ${Math.round(cpu)} %)`);
    }
  }
  return found;
}

/**
 * When a level's round CV exceeds 15 %, one sentence on what coincided per round: throttling,
 * other GPU processes, preemptions, client saturation — or that nothing was found. Null otherwise.
 */
export function explainSpread(input: SpreadInput): string | null {
  const threshold = input.threshold ?? SPREAD_THRESHOLD;
  if (input.roundCv === null || !(input.roundCv > threshold)) return null;
  const parts: string[] = [];
  for (const r of input.rounds) {
    const found = roundFindings(input, r);
    if (!found.length) continue;
    const tput = r.outputTokPerSec !== undefined ? ` (${Math.round(r.outputTokPerSec)} tok/s)` : '';
    parts.push(`round ${r.round}${tput}: ${found.join('; ')}`);
  }
  const head = `Round spread ${pct(input.roundCv)}`;
  if (parts.length) return `${head}: ${parts.join('; ')}.`;
  const caveat =
    input.gpuAvailable === false ? ' (GPU telemetry was unavailable, so throttling could not be checked)' : '';
  return `${head}: nothing found — no throttling, other GPU processes, preemptions, client saturation or busy host coincided with the rounds${caveat}.`;
}
