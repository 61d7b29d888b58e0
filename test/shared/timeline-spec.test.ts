import { describe, expect, it } from 'vitest';
import { BAND_FILLS } from '../../src/shared/chart-colors.js';
import { OutputRate, rateBinSeconds } from '../../src/shared/output-rate.js';
import type { RequestRecord } from '../../src/shared/request-record.js';
import type { LevelResult } from '../../src/shared/run-record.js';
import type { ClientSample, EngineSample, GpuSample } from '../../src/shared/telemetry.js';
import { alignSeries, levelWindows, timelineSpec } from '../../src/shared/timeline-spec.js';
import type { TimelineInput, TimelinePanel } from '../../src/shared/timeline-spec.js';

const gpuSample = (tMs: number, cls: GpuSample['class'], extra: Partial<GpuSample> = {}): GpuSample =>
  ({
    tMs,
    gpu: 0,
    class: cls,
    smClockMhz: 1980,
    maxSmClockMhz: 1980,
    tempC: 60,
    powerW: 500,
    powerLimitW: 700,
    utilPct: 90,
    memUsedMiB: 2048,
    ...extra,
  }) as GpuSample;
const round = (startMs: number, endMs: number) => ({ startMs, endMs }) as LevelResult['rounds'][number];
const level = (concurrency: number, rounds: LevelResult['rounds']): LevelResult =>
  ({ concurrency, rounds }) as LevelResult;

const input = (extra: Partial<TimelineInput> = {}): TimelineInput => ({
  ttft: [
    [1, 20],
    [2, 30],
  ],
  e2e: [
    [1, 800],
    [2, 900],
  ],
  outputRate: [[1.5, 400]],
  gpu: [],
  engine: [],
  client: [],
  levels: [],
  ...extra,
});
const byId = (panels: TimelinePanel[], id: TimelinePanel['id']): TimelinePanel => {
  const p = panels.find((x) => x.id === id);
  if (!p) throw new Error(`no panel ${id}`);
  return p;
};

describe('the timeline spec (one chart specification for the app and the HTML report)', () => {
  it('puts TTFT and E2E on panels of their own, each a scatter in ms, and output tok/s as a line', () => {
    const spec = timelineSpec(input());
    expect(spec.panels.map((p) => p.id)).toEqual(['ttft', 'e2e', 'output-rate']);
    const ttft = byId(spec.panels, 'ttft');
    expect(ttft.series).toEqual([expect.objectContaining({ label: 'TTFT', unit: 'ms', points: true })]);
    expect(ttft.ys).toEqual([[20, 30]]);
    expect(byId(spec.panels, 'e2e').ys).toEqual([[800, 900]]);
    const rate = byId(spec.panels, 'output-rate');
    expect(rate.series[0]).toMatchObject({ unit: 'tok/s' });
    expect(rate.series[0]?.points).toBeUndefined();
    expect(spec.range).toEqual([1, 2]);
    // No GPU samples: no GPU panel, and a note says so.
    expect(spec.notes).toHaveLength(1);
  });

  it('draws the GPU: SM clock with its max-clock line, temperature, power with its limit, utilisation, memory', () => {
    const spec = timelineSpec(input({ gpu: [gpuSample(0, 'full-speed'), gpuSample(1000, 'full-speed')] }));
    expect(spec.panels.map((p) => p.id)).toEqual([
      'ttft',
      'e2e',
      'output-rate',
      'sm-clock',
      'temperature',
      'power',
      'gpu-util',
      'gpu-memory',
    ]);
    expect(byId(spec.panels, 'sm-clock').refLines).toEqual([{ y: 1980, label: 'max SM clock 1980 MHz' }]);
    expect(byId(spec.panels, 'power').refLines).toEqual([{ y: 700, label: 'power limit 700 W' }]);
    expect(byId(spec.panels, 'temperature').refLines).toEqual([]);
    expect(byId(spec.panels, 'sm-clock')).toMatchObject({ unit: 'MHz', yZero: false });
    expect(byId(spec.panels, 'power')).toMatchObject({ unit: 'W', yZero: false });
    expect(byId(spec.panels, 'gpu-util')).toMatchObject({ unit: '%', yZero: true });
    // Memory is recorded in MiB and shown in GiB.
    expect(byId(spec.panels, 'gpu-memory')).toMatchObject({ unit: 'GiB', ys: [[2, 2]] });
    expect(spec.notes).toEqual([]);
  });

  it('leaves out a GPU field the driver never reported, and a ceiling it never recorded', () => {
    const gpu = [0, 1000].map((t) =>
      gpuSample(t, 'full-speed', { utilPct: null, memUsedMiB: null, maxSmClockMhz: null, powerLimitW: null }),
    );
    const spec = timelineSpec(input({ gpu }));
    expect(spec.panels.map((p) => p.id)).not.toContain('gpu-util');
    expect(spec.panels.map((p) => p.id)).not.toContain('gpu-memory');
    expect(byId(spec.panels, 'sm-clock').refLines).toEqual([]);
    expect(byId(spec.panels, 'power').refLines).toEqual([]);
  });

  it('shades thermal, hardware slowdown and power cap each in its own colour, on the GPU panels only', () => {
    const gpu = [
      gpuSample(0, 'full-speed'),
      gpuSample(1000, 'thermal'),
      gpuSample(2000, 'hw-slowdown'),
      gpuSample(3000, 'power-cap'),
      gpuSample(4000, 'full-speed'),
    ];
    const spec = timelineSpec(input({ gpu }));
    const clock = byId(spec.panels, 'sm-clock');
    expect(clock.bands.map((b) => [b.kind, b.from, b.to, b.fill])).toEqual([
      ['thermal', 1, 2, BAND_FILLS.thermal],
      ['hw-slowdown', 2, 3, BAND_FILLS['hw-slowdown']],
      ['power-cap', 3, 4, BAND_FILLS['power-cap']],
    ]);
    expect(byId(spec.panels, 'ttft').bands).toEqual([]);
    expect(spec.keys.map((k) => k.kind)).toEqual(['thermal', 'hw-slowdown', 'power-cap']);
  });

  it('never keys a power cap as throttling: a run held at its power limit has no throttling key', () => {
    const gpu = [gpuSample(0, 'power-cap'), gpuSample(1000, 'power-cap'), gpuSample(2000, 'full-speed')];
    const spec = timelineSpec(input({ gpu }));
    expect(spec.keys.map((k) => k.kind)).toEqual(['power-cap']);
    expect(spec.keys[0]?.text).toMatch(/not throttling/);
    expect(byId(spec.panels, 'sm-clock').bands.map((b) => b.kind)).toEqual(['power-cap']);
  });

  it("shades each level's measured window on every panel, labelled on the first, and spans them all", () => {
    const levels = [level(1, [round(2000, 4000), round(4500, 6000)]), level(8, []), level(4, [round(7000, 9000)])];
    expect(levelWindows(levels).map((w) => [w.from, w.to, w.label])).toEqual([
      [2, 6, 'c=1'],
      [7, 9, 'c=4'],
    ]);
    const spec = timelineSpec(input({ levels }));
    expect(spec.panels.every((p) => p.bands.filter((b) => b.kind === 'window').length === 2)).toBe(true);
    expect(spec.panels.map((p) => p.bandLabels)).toEqual([true, false, false]);
    expect(spec.range).toEqual([1, 9]);
    expect(spec.keys.map((k) => k.kind)).toEqual(['window']);
  });

  it("draws the engine's queue and KV cache and the client's event-loop lag only where they were reported", () => {
    const engine = [
      { tMs: 500, running: 2, waiting: 0, kvUsage: 0.25 },
      { tMs: 1000, running: 4, waiting: 3, kvUsage: 0.5 },
    ] as EngineSample[];
    const client: ClientSample[] = [{ tMs: 500, loopLagMs: 3, cpuPct: 10 }];
    const spec = timelineSpec(input({ engine, client }));
    expect(byId(spec.panels, 'engine-queue').ys).toEqual([
      [2, 4],
      [0, 3],
    ]);
    expect(byId(spec.panels, 'kv-cache')).toMatchObject({ unit: '%', ys: [[25, 50]] });
    expect(byId(spec.panels, 'loop-lag')).toMatchObject({ unit: 'ms', ys: [[3]] });
    const none = timelineSpec(input({ engine: [{ tMs: 1, running: null, waiting: null, kvUsage: null }] as never }));
    expect(none.panels.map((p) => p.id)).toEqual(['ttft', 'e2e', 'output-rate']);
  });

  it('gives one series per GPU, aligned on one ascending time axis', () => {
    const gpu = [
      gpuSample(500, 'idle'),
      { ...gpuSample(500, 'idle'), gpu: 1, smClockMhz: 1900 },
      gpuSample(1000, 'idle'),
    ];
    const clock = byId(timelineSpec(input({ gpu })).panels, 'sm-clock');
    expect(clock.x).toEqual([0.5, 1]);
    expect(clock.ys).toEqual([
      [1980, 1980],
      [1900, null],
    ]);
    expect(clock.series.map((s) => s.label)).toEqual(['SM clock GPU 0', 'SM clock GPU 1']);
    expect(new Set(clock.series.map((s) => s.color)).size).toBe(2);
    expect(
      alignSeries([
        [
          [2, 1],
          [1, 2],
        ],
      ]).x,
    ).toEqual([1, 2]);
  });
});

describe('output tokens per second from the requests', () => {
  const req = (extra: Partial<RequestRecord>): RequestRecord =>
    ({ warmup: false, ok: true, endMs: 1500, chunks: [], nOut: 0, ...extra }) as RequestRecord;

  it("counts each chunk's tokens in the second they arrived; warm-up and failures are left out", () => {
    const rate = new OutputRate(1);
    rate.add(
      req({
        chunks: [
          [200, 10],
          [1200, 20],
        ],
      }),
    );
    rate.add(req({ chunks: [[3500, 5]], endMs: 3600 }));
    rate.add(req({ warmup: true, chunks: [[200, 100]] }));
    rate.add(req({ ok: false, chunks: [[200, 100]] }));
    // A request without chunk counts is placed at its end.
    rate.add(req({ endMs: 1800, nOut: 7 }));
    expect(rate.points()).toEqual([
      [0.5, 10],
      [1.5, 27],
      [2.5, 0],
      [3.5, 5],
    ]);
  });

  it('takes bins of about 1/150 of the run, never under a second, in round steps', () => {
    expect(rateBinSeconds(30)).toBe(1);
    expect(rateBinSeconds(600)).toBe(5);
    expect(rateBinSeconds(3600)).toBe(50);
  });
});
