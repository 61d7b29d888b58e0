import { describe, expect, it } from 'vitest';
import { preemptionsCheck } from '../../../src/core/checks/preemptions.js';
import { throttlingCheck } from '../../../src/core/checks/throttling.js';
import { levelTelemetry as level } from '../../fakes/level-telemetry.js';

describe('throttling', () => {
  it('fails when thermal slowdown covered >= 5 % of the window, with the share and the lowest clock', () => {
    expect(throttlingCheck(level({ throttle: { thermalFraction: 0.25 } }))).toMatchObject({
      status: 'fail',
      code: 'gpu-slowed',
      facts: { thermalFraction: 0.25, smClockMinMhz: 1400, clockRatioMin: 0.71 },
    });
  });

  it('fails on hardware slowdown / power brake too', () => {
    expect(throttlingCheck(level({ throttle: { hwSlowdownFraction: 0.05 } }))).toMatchObject({
      status: 'fail',
      code: 'gpu-slowed',
      facts: { hwSlowdownFraction: 0.05 },
    });
  });

  it('only warns for a brief slowdown under 5 %', () => {
    expect(throttlingCheck(level({ throttle: { thermalFraction: 0.02 } }))).toMatchObject({
      status: 'warn',
      code: 'brief-slowdown',
    });
  });

  it('only warns when power-capped (normal at full load)', () => {
    expect(throttlingCheck(level({ throttle: { powerCapFraction: 0.8 } }))).toMatchObject({
      status: 'warn',
      code: 'power-capped',
      facts: { powerCapFraction: 0.8 },
    });
  });

  it('passes a cool level', () => {
    expect(throttlingCheck(level({ tempMaxC: 62 }))).toMatchObject({
      id: 'throttling',
      status: 'pass',
      code: 'no-slowdown',
      facts: { tempMaxC: 62, clockRatioMean: 0.96 },
    });
  });

  it('never passes without telemetry: warns "unknown" with the reason', () => {
    expect(throttlingCheck(undefined)).toMatchObject({ status: 'warn', code: 'telemetry-unavailable' });
    const reason = 'nvidia-smi not found; install the NVIDIA driver or pass --nvidia-smi PATH';
    expect(throttlingCheck(level({ source: 'unavailable', reason, samples: 0 }))).toMatchObject({
      status: 'warn',
      code: 'telemetry-unavailable',
      facts: { reason },
    });
    expect(throttlingCheck(level({ samples: 0 }))).toMatchObject({ status: 'warn', code: 'no-samples' });
    expect(throttlingCheck(level({ throttle: { unknownFraction: 1 } }))).toMatchObject({
      status: 'warn',
      code: 'reasons-unknown',
      facts: { unknownFraction: 1 },
    });
  });
});

describe('preemptions', () => {
  it('warns with the count, passes at 0, is absent without engine metrics', () => {
    expect(preemptionsCheck(level({ preemptions: 12 }))).toMatchObject({
      status: 'warn',
      code: 'preempted',
      facts: { preemptions: 12, kvUsagePeak: 0.97 },
    });
    expect(preemptionsCheck(level({ preemptions: 0 }))).toMatchObject({ status: 'pass', code: 'none-preempted' });
    expect(preemptionsCheck(level({ preemptions: null }))).toBeNull();
  });
});
