import { nodeRunFs, replaceFileSync } from '../runs/run-fs.js';
import type { SimProfile } from './profile.js';

/** Clocks-event-reason bits, as nvidia-smi reports them in clocks_event_reasons.active. */
export const REASON_IDLE = 0x1;
export const REASON_SW_POWER_CAP = 0x4;
export const REASON_SW_THERMAL = 0x20;
export const REASON_HW_THERMAL = 0x40;

/** One GPU in the state file the fake nvidia-smi reads (null = the card has no such reading: [N/A]). */
export interface FakeGpuReading {
  index: number;
  name: string;
  uuid: string;
  pciBusId: string;
  smClockMhz: number;
  maxSmClockMhz: number;
  memClockMhz: number;
  maxMemClockMhz: number;
  tempC: number;
  memTempC: number | null;
  powerW: number;
  powerLimitW: number;
  utilPct: number;
  memUtilPct: number;
  memUsedMiB: number;
  memTotalMiB: number;
  pstate: string;
  throttleMask: number;
  fanPct: number | null;
}

/** The whole state file: written atomically (temp + rename) so a reader never sees half a file. */
export interface FakeGpuState {
  version: 1;
  updatedAtMs: number;
  driverVersion: string;
  cudaVersion: string;
  gpus: FakeGpuReading[];
  processes: Array<{ pid: number; name: string; usedMiB: number; gpuIndex: number }>;
}

/** Hot-reached 5 °C past the slowdown limit the hardware thermal bit joins the software one. */
const HW_THERMAL_MARGIN_C = 5;
/** Clocks recover only once the GPU is this much below the limit (hysteresis, as real boost does). */
const RECOVER_MARGIN_C = 2;

/**
 * A thermal/power model of the GPU the simulated engine runs on. The scheduler reports busy time;
 * every tick the model heats or cools, and the clock ratio it exposes slows the step time.
 */
export class FakeGpu {
  tempC: number;
  /** Current SM clock as a share of max (1 = full speed); steps take 1/clockRatio as long. */
  clockRatio = 1;
  utilPct = 0;
  powerW: number;
  mask = REASON_IDLE;
  private busyMs = 0;
  /** Steps whose busy time is not yet all counted: each is counted in the tick it ran in, not the one it was planned in. */
  private steps: Array<{ start: number; end: number }> = [];
  private lastTickMs: number;

  constructor(
    private readonly p: SimProfile,
    nowMs: number,
    private readonly pid = process.pid,
  ) {
    this.tempC = p.gpuAmbientC;
    this.powerW = p.gpuIdlePowerW;
    this.lastTickMs = nowMs;
  }

  /** The scheduler reports time the GPU spends computing (a step); with startMs it counts in the ticks it spans. */
  addBusy(ms: number, startMs?: number): void {
    if (startMs === undefined) this.busyMs += ms;
    else if (ms > 0) this.steps.push({ start: startMs, end: startMs + ms });
  }

  /** Power above idle while computing at the current clock (W): the energy truth charges steps at this rate. */
  loadPowerW(): number {
    const p = this.p;
    const demand = p.gpuIdlePowerW + (p.gpuFullPowerW - p.gpuIdlePowerW) * this.clockRatio;
    return Math.max(0, Math.min(demand, p.gpuPowerLimitW) - p.gpuIdlePowerW);
  }

  /** Advances the model to nowMs: utilization from busy time, then power, heat and clocks. */
  tick(nowMs: number): void {
    const dtMs = nowMs - this.lastTickMs;
    if (dtMs <= 0) return;
    this.lastTickMs = nowMs;
    for (const step of this.steps) {
      const upTo = Math.min(step.end, nowMs);
      if (upTo > step.start) this.busyMs += upTo - step.start;
      step.start = Math.max(step.start, upTo);
    }
    this.steps = this.steps.filter((step) => step.start < step.end);
    const util = Math.min(1, this.busyMs / dtMs);
    this.busyMs = 0;
    const dt = dtMs / 1000;
    const p = this.p;
    // Dynamic power scales with load and clock; above the limit the card caps power (bit 0x4)
    // without losing clock in this model, which is what a 'power-capped only' run looks like.
    const demand = p.gpuIdlePowerW + (p.gpuFullPowerW - p.gpuIdlePowerW) * util * this.clockRatio;
    const capped = demand > p.gpuPowerLimitW;
    this.powerW = Math.min(demand, p.gpuPowerLimitW);
    const span = Math.max(1, p.gpuFullPowerW - p.gpuIdlePowerW);
    const load = (this.powerW - p.gpuIdlePowerW) / span;
    this.tempC += (p.gpuHeatRate * load - p.gpuCoolRate * (this.tempC - p.gpuAmbientC)) * dt;
    let thermal = false;
    if (this.tempC > p.gpuThermalLimitC) {
      this.clockRatio = Math.max(p.gpuMinClockRatio, this.clockRatio - p.gpuThrottleRate * dt);
      thermal = true;
    } else if (this.clockRatio < 1) {
      if (this.tempC < p.gpuThermalLimitC - RECOVER_MARGIN_C) {
        this.clockRatio = Math.min(1, this.clockRatio + (p.gpuThrottleRate / 2) * dt);
      }
      thermal = this.clockRatio < 1;
    }
    this.utilPct = Math.round(util * 100);
    let mask = 0;
    if (util === 0) mask |= REASON_IDLE;
    if (capped) mask |= REASON_SW_POWER_CAP;
    if (thermal) mask |= REASON_SW_THERMAL;
    if (this.tempC >= p.gpuThermalLimitC + HW_THERMAL_MARGIN_C) mask |= REASON_HW_THERMAL;
    this.mask = mask;
  }

  /** The engine stopped: no load, no memory held, no processes (temperature stays where it was). */
  release(): void {
    this.released = true;
    this.utilPct = 0;
    this.powerW = this.p.gpuIdlePowerW;
    this.mask = REASON_IDLE;
  }

  private released = false;

  /** A snapshot in the state-file shape. */
  state(): FakeGpuState {
    const p = this.p;
    const idle = this.utilPct === 0;
    const gpus: FakeGpuReading[] = [];
    for (let i = 0; i < p.gpuCount; i++) {
      gpus.push({
        index: i,
        name: p.gpuName,
        uuid: `GPU-5e1f0000-0000-4000-8000-${(0x5e1f00000000 + i).toString(16).padStart(12, '0')}`,
        pciBusId: `00000000:${(0x18 + i * 0x10).toString(16).toUpperCase().padStart(2, '0')}:00.0`,
        smClockMhz: idle ? p.gpuIdleSmClockMhz : Math.round(p.gpuMaxSmClockMhz * this.clockRatio),
        maxSmClockMhz: p.gpuMaxSmClockMhz,
        memClockMhz: p.gpuMemClockMhz,
        maxMemClockMhz: p.gpuMemClockMhz,
        tempC: Math.round(this.tempC),
        memTempC: p.gpuMemTempOffsetC === null ? null : Math.round(this.tempC + p.gpuMemTempOffsetC),
        powerW: Math.round(this.powerW * 100) / 100,
        powerLimitW: p.gpuPowerLimitW,
        utilPct: this.utilPct,
        memUtilPct: Math.round(this.utilPct * 0.6),
        memUsedMiB: this.released ? 0 : p.gpuMemUsedMib,
        memTotalMiB: p.gpuMemTotalMib,
        pstate: idle ? 'P8' : 'P0',
        throttleMask: this.mask,
        fanPct: null,
      });
    }
    return {
      version: 1,
      updatedAtMs: Date.now(),
      driverVersion: p.gpuDriverVersion,
      cudaVersion: p.gpuCudaVersion,
      gpus,
      processes: this.released
        ? []
        : gpus.map((g) => ({ pid: this.pid, name: 'servebench-sim', usedMiB: g.memUsedMiB, gpuIndex: g.index })),
    };
  }
}

/** Writes the state file atomically: readers (the fake nvidia-smi) never see a torn file. */
export function writeGpuState(file: string, state: FakeGpuState): void {
  // A full disk must not leave a temp file in the run folder: the one replace removes it.
  replaceFileSync(nodeRunFs, file, JSON.stringify(state, null, 1));
}
