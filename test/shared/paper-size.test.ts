import { describe, expect, it } from 'vitest';
import { paperForRegion } from '../../src/shared/paper-size.js';

describe('paperForRegion', () => {
  it('prints Letter in the Americas that use it and the Philippines, A4 elsewhere', () => {
    for (const r of ['US', 'en-US', 'fr_CA', 'es-MX', 'en-us', 'fil-PH']) expect(paperForRegion(r), r).toBe('Letter');
    for (const r of ['DE', 'en-GB', 'fr-FR', 'pt_BR', 'zh-Hans-CN', 'ja']) expect(paperForRegion(r), r).toBe('A4');
  });

  it('falls back to A4 where no region is known', () => {
    expect(paperForRegion('')).toBe('A4');
    expect(paperForRegion(undefined)).toBe('A4');
    expect(paperForRegion('en')).toBe('A4');
  });
});
