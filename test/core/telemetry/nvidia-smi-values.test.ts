import { describe, expect, it } from 'vitest';
import { parseLoopLine, type ProbedFields, LOOP_FIELDS } from '../../../src/core/telemetry/nvidia-smi-fields.js';
import { boundGpuSample } from '../../../src/core/telemetry/sample-bounds.js';
import {
  isSmiUnknown,
  parseSmiNumber,
  parseSmiText,
  parseThrottleMask,
} from '../../../src/core/telemetry/nvidia-smi-values.js';

describe('nvidia-smi values', () => {
  it('turns every "no reading" marker into null, never 0', () => {
    for (const raw of ['[N/A]', 'N/A', '[Not Supported]', '[Unknown Error]', '[Insufficient Permissions]', ' ', '']) {
      expect(isSmiUnknown(raw)).toBe(true);
      expect(parseSmiNumber(raw)).toBeNull();
      expect(parseSmiText(raw)).toBeNull();
      expect(parseThrottleMask(raw)).toBeNull();
    }
  });

  it('parses numbers with or without units, and keeps a real 0', () => {
    expect(parseSmiNumber('250.12')).toBe(250.12);
    expect(parseSmiNumber(' 1980 ')).toBe(1980);
    expect(parseSmiNumber('81559 MiB')).toBe(81559);
    expect(parseSmiNumber('0')).toBe(0);
    expect(parseSmiNumber('P0')).toBeNull();
  });

  it('parses the 64-bit hex throttle mask', () => {
    expect(parseThrottleMask('0x0000000000000004')).toBe(4);
    expect(parseThrottleMask('0x0000000000000060')).toBe(0x60);
    expect(parseThrottleMask('0x0000000000000000')).toBe(0);
    expect(parseThrottleMask('banana')).toBeNull();
  });

  it('parses a loop line into a classified sample, N/A fields as null', () => {
    const fields: ProbedFields = { query: [...LOOP_FIELDS], canonical: [...LOOP_FIELDS], dropped: [] };
    const s = parseLoopLine(
      '2024/05/14 10:12:01.000, 0, 2610, 3120, 10501, 83, [N/A], 398.75, 450.00, 100, 21870, 24564, P2, 0x0000000000000020',
      fields,
      1234.5,
    );
    expect(s).toMatchObject({
      tMs: 1234.5,
      gpu: 0,
      smClockMhz: 2610,
      maxSmClockMhz: 3120,
      tempC: 83,
      memTempC: null,
      powerW: 398.75,
      powerLimitW: 450,
      pstate: 'P2',
      throttleMask: 0x20,
      class: 'thermal',
    });
  });

  it('keeps inf, NaN and numbers past a double as impossible readings, which the bounds then name', () => {
    const fields: ProbedFields = { query: [...LOOP_FIELDS], canonical: [...LOOP_FIELDS], dropped: [] };
    const s = parseLoopLine(
      '2024/05/14 10:12:01.000, 0, 2610, 3120, 10501, inf, NaN, 1e400, 450.00, -inf, 21870, 24564, P2, 0x0000000000000000',
      fields,
      0,
    )!;
    expect(s.tempC).toBe(Infinity);
    expect(s.memTempC).toBeNaN();
    expect(s.powerW).toBe(Infinity);
    expect(s.utilPct).toBe(-Infinity);
    const bounded = boundGpuSample(s);
    expect(Object.keys(bounded.rejected ?? {}).sort()).toEqual(['memTempC', 'powerW', 'tempC', 'utilPct']);
    expect([bounded.tempC, bounded.memTempC, bounded.powerW, bounded.utilPct]).toEqual([null, null, null, null]);
    expect(bounded.smClockMhz).toBe(2610);
  });

  it('maps renamed fields back by their canonical name and rejects lines that are not data', () => {
    const query = LOOP_FIELDS.filter((f) => f !== 'temperature.memory').map((f) =>
      f === 'clocks_throttle_reasons.active' ? 'clocks_event_reasons.active' : f,
    );
    const canonical = LOOP_FIELDS.filter((f) => f !== 'temperature.memory');
    const fields: ProbedFields = { query, canonical: [...canonical], dropped: ['temperature.memory'] };
    const line =
      '2024/05/14 10:12:01.000, 1, 1320, 1410, 1593, 62, 398.40, 400.00, 100, 78210, 81920, P0, 0x0000000000000004';
    expect(parseLoopLine(line, fields, 1)).toMatchObject({
      gpu: 1,
      memTempC: null,
      throttleMask: 4,
      class: 'power-cap',
    });
    expect(
      parseLoopLine('Unable to determine the device handle for GPU0000:07:00.0: Unknown Error', fields, 1),
    ).toBeNull();
    expect(parseLoopLine('', fields, 1)).toBeNull();
  });
});
