import { describe, expect, it } from 'vitest';
import { loraAdapters, parseLoraList, pickAdapter } from '../../src/shared/lora.js';
import { LORA_SETTING } from '../../src/shared/server-settings.js';

describe('--lora', () => {
  it('reads names, paths and weights', () => {
    expect(loraAdapters('a=/w/a:3, b')).toEqual([
      { name: 'a', path: '/w/a', weight: 3 },
      { name: 'b', weight: 1 },
    ]);
  });

  it('refuses a name twice, a bad weight and an empty path in one line each', () => {
    expect(parseLoraList('a,a')).toMatchObject({ ok: false, error: expect.stringContaining("'a' is named twice") });
    expect(parseLoraList('a:0')).toMatchObject({ ok: false, error: expect.stringContaining('from 1 to 1000') });
    expect(parseLoraList('a=')).toMatchObject({ ok: false, error: expect.stringContaining('no path') });
    expect(LORA_SETTING.safeParse('bad name').success).toBe(false);
  });

  it('round-robin walks the weighted cycle', () => {
    const adapters = loraAdapters('a:3,b:1');
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((k) => pickAdapter(adapters, 'round-robin', k, 0).name).join('')).toBe(
      'aaabaaab',
    );
  });

  it('random draws by weight, the same for the same seed and key', () => {
    const adapters = loraAdapters('a:3,b:1');
    const picks = Array.from({ length: 4000 }, (_, k) => pickAdapter(adapters, 'random', k, 7).name);
    const share = picks.filter((n) => n === 'a').length / picks.length;
    expect(share).toBeGreaterThan(0.7);
    expect(share).toBeLessThan(0.8);
    expect(pickAdapter(adapters, 'random', 123, 7)).toEqual(pickAdapter(adapters, 'random', 123, 7));
  });
});
