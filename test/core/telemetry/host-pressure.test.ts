import { describe, expect, it } from 'vitest';
import { clientCheck } from '../../../src/core/checks/client.js';
import { streamingCheck } from '../../../src/core/checks/streaming.js';
import { explainSpread } from '../../../src/core/telemetry/explain-spread.js';
import {
  hostBusy,
  hostPressureBetween,
  parsePsiSomeTotal,
  parseSchedstatWait,
  PROC_PATHS,
  sampleHostPressure,
  type ProcReader,
} from '../../../src/core/telemetry/host-pressure.js';
import type { HostPressure } from '../../../src/shared/run-record.js';
import { streamed } from '../metrics/make-record.js';

/** A /proc whose counters the test sets: PSI "some" total (µs) and this process's run-queue wait (ns). */
function fakeProc(state: { someUs?: number; waitNs?: number }): ProcReader {
  return (path) => {
    if (path === PROC_PATHS.psiCpu && state.someUs !== undefined)
      return `some avg10=64.00 avg60=60.00 avg300=55.00 total=${state.someUs}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n`;
    if (path === PROC_PATHS.selfSchedstat && state.waitNs !== undefined) return `912345678 ${state.waitNs} 4321\n`;
    return null;
  };
}

const BUSY: HostPressure = { windowMs: 10_000, cpuSomeShare: 0.64, selfWaitShare: 0.38 };
const QUIET: HostPressure = { windowMs: 10_000, cpuSomeShare: 0.01, selfWaitShare: 0.002 };
const UNKNOWN: HostPressure = { windowMs: 10_000, cpuSomeShare: null, selfWaitShare: null };

describe("the host's CPU pressure", () => {
  it('reads PSI some total and the run-queue wait of /proc/self/schedstat; anything else is unknown', () => {
    expect(
      parsePsiSomeTotal('some avg10=78.95 avg60=73.97 avg300=72.45 total=6587803020\nfull avg10=0.00 total=0'),
    ).toBe(6587803020);
    expect(parsePsiSomeTotal(null)).toBeNull();
    expect(parsePsiSomeTotal('<html>')).toBeNull();
    expect(parseSchedstatWait('0 105868 1\n')).toBe(105868);
    expect(parseSchedstatWait('12 -4 1')).toBeNull();
    expect(parseSchedstatWait('')).toBeNull();
  });

  it('over a level: the shares of its window, from readings at its start and end', () => {
    const state = { someUs: 1_000_000, waitNs: 5_000_000_000 };
    const proc = fakeProc(state);
    const a = sampleHostPressure(proc, 0);
    Object.assign(state, { someUs: 1_000_000 + 6_400_000, waitNs: 5_000_000_000 + 3_800_000_000 });
    const p = hostPressureBetween(a, sampleHostPressure(proc, 10_000));
    expect(p).toEqual({ windowMs: 10_000, cpuSomeShare: 0.64, selfWaitShare: 0.38 });
    expect(hostBusy(p)).toBe(true);
  });

  it('no PSI and no schedstat (macOS, an old kernel): unknown, never busy nor quiet', () => {
    const proc = fakeProc({});
    const p = hostPressureBetween(sampleHostPressure(proc, 0), sampleHostPressure(proc, 1000));
    expect(p).toEqual({ windowMs: 1000, cpuSomeShare: null, selfWaitShare: null });
    expect(hostBusy(p)).toBeNull();
  });

  it('client check: a lag while the host was busy is the host-busy code, not the client saturated', () => {
    const lagging = { loopLagP99Ms: 141, scheduleLagP99Ms: null };
    const busy = clientCheck({ ...lagging, host: BUSY });
    expect(busy).toMatchObject({ status: 'fail', code: 'host-busy' });
    expect(busy.facts).toMatchObject({ hostBusy: true, hostCpuSomeShare: 0.64, hostSelfWaitShare: 0.38 });
    const own = clientCheck({ ...lagging, host: QUIET });
    expect(own).toMatchObject({ status: 'fail', code: 'client-lag', facts: { hostBusy: false } });
    const unknown = clientCheck({ ...lagging, host: UNKNOWN });
    expect(unknown).toMatchObject({ code: 'client-lag', facts: { hostBusy: null } });
  });

  it('client check: a concurrency shortfall on a busy host says the host held it back', () => {
    const c = clientCheck({
      loopLagP99Ms: 5,
      scheduleLagP99Ms: null,
      askedConcurrency: 64,
      offered: { inFlightMean: 30, inFlightP5: 20 },
      host: BUSY,
    });
    expect(c).toMatchObject({ status: 'fail', code: 'offered-below-asked', facts: { hostBusy: true } });
  });

  it('streaming: pauses at c=1 on a busy host are the host, not "the server stalled"', () => {
    // 20 requests streaming every 10 ms, each paused once for 400 ms.
    const records = Array.from({ length: 20 }, (_, i) => {
      const r = streamed({ sendMs: i * 1000, ttftMs: 20, gapMs: 10, chunks: 30 }, { id: i });
      const chunks = r.chunks.map(([t, n], k): [number, number] => [k >= 15 ? t + 400 : t, n]);
      return { ...r, chunks, endMs: chunks.at(-1)![0] };
    });
    const busy = streamingCheck(records, 5, null, null, BUSY);
    expect(busy).toMatchObject({ status: 'warn', code: 'stalled', facts: { hostBusy: true } });
    const quiet = streamingCheck(records, 5, null, null, QUIET);
    expect(quiet).toMatchObject({ code: 'stalled', facts: { hostBusy: false } });
  });

  it('round spread: a loop that lagged at 3 % CPU was waiting for the CPU, not saturated', () => {
    const text = explainSpread({
      roundCv: 0.3,
      rounds: [
        { round: 0, startMs: 0, endMs: 1000, outputTokPerSec: 2000 },
        { round: 1, startMs: 1000, endMs: 2000, outputTokPerSec: 1200 },
      ],
      gpuSamples: [],
      engineSamples: [],
      clientSamples: [{ tMs: 1500, loopLagMs: 141, cpuPct: 3 }],
    });
    expect(text).toMatch(
      /round 1 \(1200 tok\/s\): the host was busy \(event-loop lag up to 141 ms while this process used only 3 % CPU/,
    );
    expect(text).not.toMatch(/client saturated/);
  });
});
