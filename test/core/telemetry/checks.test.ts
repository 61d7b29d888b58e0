import { describe, expect, it } from 'vitest';
import { telemetryChecks } from '../../../src/core/telemetry/checks.js';
import type { LevelTelemetry } from '../../../src/shared/run-record.js';

const level = (
  o: Omit<Partial<LevelTelemetry>, 'throttle'> & { throttle?: Partial<LevelTelemetry['throttle']> } = {},
): LevelTelemetry => ({
  source: 'nvidia-smi',
  samples: 40,
  smClockMeanMhz: 1900,
  smClockMinMhz: 1400,
  clockRatioMean: 0.96,
  clockRatioMin: 0.71,
  tempMaxC: 87,
  powerMeanW: 650,
  energyJ: 1000,
  jPerOutputTok: 0.1,
  kvUsagePeak: 0.97,
  waitingPeak: 3,
  runningPeak: 16,
  preemptions: null,
  prefixCacheHits: null,
  ...o,
  throttle: {
    thermalFraction: 0,
    hwSlowdownFraction: 0,
    powerCapFraction: 0,
    idleFraction: 0,
    unknownFraction: 0,
    ...o.throttle,
  },
});

const byId = (checks: ReturnType<typeof telemetryChecks>, id: string) => checks.find((c) => c.id === id);

describe('telemetryChecks', () => {
  it('fails throttling when thermal slowdown covered >= 5 % of the window, saying how much and the lowest clock', () => {
    const c = byId(telemetryChecks(level({ throttle: { thermalFraction: 0.25 } })), 'throttling');
    expect(c?.status).toBe('fail');
    expect(c?.detail).toMatch(/thermal slowdown 25 %/);
    expect(c?.detail).toMatch(/lowest SM clock 1400 MHz \(71 % of max\)/);
  });

  it('fails on hardware slowdown / power brake too', () => {
    const c = byId(telemetryChecks(level({ throttle: { hwSlowdownFraction: 0.05 } })), 'throttling');
    expect(c?.status).toBe('fail');
    expect(c?.detail).toMatch(/hardware slowdown \/ power brake 5 %/);
  });

  it('only warns for a brief slowdown under 5 %', () => {
    expect(byId(telemetryChecks(level({ throttle: { thermalFraction: 0.02 } })), 'throttling')?.status).toBe('warn');
  });

  it('only warns when power-capped, calling it normal at full load', () => {
    const c = byId(telemetryChecks(level({ throttle: { powerCapFraction: 0.8 } })), 'throttling');
    expect(c?.status).toBe('warn');
    expect(c?.detail).toMatch(/power-capped 80 %.*normal at full load/);
  });

  it('passes a cool level', () => {
    const c = byId(telemetryChecks(level({ tempMaxC: 62 })), 'throttling');
    expect(c).toEqual({
      id: 'throttling',
      status: 'pass',
      detail: 'no thermal or hardware slowdown; SM clock 96 % of max on average, max 62 °C',
    });
  });

  it('never passes without telemetry: warn "unknown" with the reason', () => {
    expect(byId(telemetryChecks(undefined), 'throttling')?.status).toBe('warn');
    const c = byId(
      telemetryChecks(
        level({
          source: 'unavailable',
          reason: 'nvidia-smi not found; install the NVIDIA driver or pass --nvidia-smi PATH',
          samples: 0,
        }),
      ),
      'throttling',
    );
    expect(c).toEqual({
      id: 'throttling',
      status: 'warn',
      detail: 'unknown: nvidia-smi not found; install the NVIDIA driver or pass --nvidia-smi PATH',
    });
    expect(byId(telemetryChecks(level({ samples: 0 })), 'throttling')?.detail).toMatch(/^unknown/);
    expect(byId(telemetryChecks(level({ throttle: { unknownFraction: 1 } })), 'throttling')).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(/^unknown/),
    });
  });

  it('preemptions: warns with the count, passes at 0, omitted without engine metrics', () => {
    expect(byId(telemetryChecks(level({ preemptions: 12 })), 'preemptions')).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(/preempted 12 requests/),
    });
    expect(byId(telemetryChecks(level({ preemptions: 0 })), 'preemptions')?.status).toBe('pass');
    expect(byId(telemetryChecks(level({ preemptions: null })), 'preemptions')).toBeUndefined();
  });
});
