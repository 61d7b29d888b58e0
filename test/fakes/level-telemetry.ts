import type { LevelTelemetry } from '../../src/shared/run-record.js';

/** A level's telemetry as the recorder summarizes it, nothing throttled, with the fields given. */
export const levelTelemetry = (
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
