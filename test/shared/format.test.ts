import { describe, expect, it } from 'vitest';
import { DASH, fmtDurationMs, fmtNumber, fmtRatio, fmtShare, fmtTick, fmtValue } from '../../src/shared/format.js';

describe('the one formatting module', () => {
  it('writes one dash for every missing or non-finite value, whatever the unit', () => {
    for (const v of [null, undefined, NaN, Infinity, -Infinity]) {
      expect(fmtNumber(v)).toBe(DASH);
      expect(fmtDurationMs(v)).toBe(DASH);
      expect(fmtShare(v)).toBe(DASH);
      expect(fmtRatio(v)).toBe(DASH);
      for (const unit of ['ms', 's', 'tok/s', '$', '%', 'J', 'W', '°C', 'MHz'] as const)
        expect(fmtValue(v, unit)).toBe(DASH);
    }
  });

  it('keeps three significant digits and groups thousands', () => {
    expect([1.234, 12.34, 123.4, 1234.5, 30_000_000].map((v) => fmtNumber(v))).toEqual([
      '1.23',
      '12.3',
      '123',
      '1,235',
      '30,000,000',
    ]);
    expect(fmtValue(30_000_000, 'tok/s')).toBe('30,000,000 tok/s');
  });

  it('never prints a tiny value as zeros', () => {
    expect(fmtNumber(0.0123)).toBe('0.0123');
    expect(fmtNumber(0.000032)).toBe('3.2e-5');
    expect(fmtNumber(0.0004, 3)).toBe('0.0004');
    expect(fmtDurationMs(0.000032)).toBe('32 ns');
    expect(fmtDurationMs(0.5)).toBe('500 µs');
    expect(fmtNumber(0)).toBe('0');
  });

  it('writes negative values with their sign, by the same rules', () => {
    expect(fmtNumber(-1234.5)).toBe('-1,235');
    expect(fmtNumber(-0.000032)).toBe('-3.2e-5');
    expect(fmtDurationMs(-12.34)).toBe('-12.3 ms');
    expect(fmtValue(-0.5, '$', 2)).toBe('-$0.50');
  });

  it('adds each unit itself, milliseconds switching to seconds past ten thousand', () => {
    expect(fmtDurationMs(20_500)).toBe('20.5 s');
    expect(fmtDurationMs(9_999)).toBe('9,999 ms');
    expect(fmtValue(2.05, 's')).toBe('2,050 ms');
    expect(fmtValue(0.125, '%')).toBe('12.5 %');
    expect(fmtValue(0.2777, '$', 3)).toBe('$0.278');
    expect(fmtValue(71, '°C')).toBe('71 °C');
    expect(fmtValue(1980, 'MHz')).toBe('1,980 MHz');
    expect(fmtValue(0.312, 'J')).toBe('0.312 J');
    expect(fmtValue(650.4, 'W')).toBe('650 W');
    expect(fmtRatio(1.234)).toBe('1.23×');
  });
});

describe('axis ticks', () => {
  it('take the decimals their step needs: tiny steps never read 0.000 0.000 0.000', () => {
    expect([0.00001, 0.00002, 0.00003].map((t) => fmtTick(t, 0.00001))).toEqual(['0.00001', '0.00002', '0.00003']);
    expect([0, 0.25, 0.5].map((t) => fmtTick(t, 0.25))).toEqual(['0', '0.25', '0.50']);
    expect([1000, 2000].map((t) => fmtTick(t, 1000))).toEqual(['1,000', '2,000']);
    expect([20_000, 30_000_000].map((t) => fmtTick(t))).toEqual(['20k', '30M']);
    expect(fmtTick(NaN)).toBe('');
  });
});
