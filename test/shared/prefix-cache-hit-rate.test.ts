import { describe, expect, it } from 'vitest';
import { prefixCacheHitRate } from '../../src/shared/report-columns.js';
import type { LevelResult, LevelTelemetry, ResponseCache } from '../../src/shared/run-record.js';

const level = (engine: number | null | undefined, responses: number | null | undefined): LevelResult =>
  ({
    ...(engine !== undefined ? { telemetry: { prefixCacheHitRate: engine } as LevelTelemetry } : {}),
    ...(responses !== undefined ? { responseCache: { hitRate: responses } as ResponseCache } : {}),
  }) as LevelResult;

describe('prefixCacheHitRate', () => {
  it("takes the responses' exact rate over a counter scraped once a second (a short level's can read 0)", () => {
    expect(prefixCacheHitRate(level(0, 0.42))).toBe(0.42);
  });

  it('falls back to the engine counter where not every response reported, and is null with neither', () => {
    expect(prefixCacheHitRate(level(0.3, null))).toBe(0.3);
    expect(prefixCacheHitRate(level(0.3, undefined))).toBe(0.3);
    expect(prefixCacheHitRate(level(undefined, undefined))).toBeNull();
    expect(prefixCacheHitRate(level(null, null))).toBeNull();
  });
});
