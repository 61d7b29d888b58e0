import { describe, expect, it } from 'vitest';
import { buildPrompts, composePrompt, prefixWords, PREFIX_DIGITS } from '../../../src/core/load/prompts.js';

// One token per word, as a whitespace tokenizer counts.
const counter = async (text: string): Promise<number> => text.split(' ').filter(Boolean).length;

describe('a level holds its prompts’ lengths, not their texts', () => {
  for (const verifyEach of [true, false]) {
    it(`composes each text when it is read, the same each time (verifyEach ${verifyEach})`, async () => {
      const options = { count: 300, targetTokens: 40, runNonce: 9, firstIndex: 0, uniquePrefix: true, counter };
      const prompts = await buildPrompts({ ...options, verifyEach });
      const later = prompts.slice(1);
      // No string is stored on the prompt: its text is an accessor.
      expect(later.every((p) => typeof Object.getOwnPropertyDescriptor(p, 'text')?.get === 'function')).toBe(true);
      expect(prompts[7]!.text).toBe(prompts[7]!.text);
      expect(new Set(prompts.map((p) => p.text)).size).toBe(300);
      const prefix = [...prefixWords(9, 2), ...prefixWords(7, PREFIX_DIGITS)];
      expect(prompts[7]!.text.startsWith(composePrompt(prefix, 0, 9 * 7919 + 7))).toBe(true);
      if (verifyEach) expect(await Promise.all(prompts.map((p) => counter(p.text)))).toEqual(prompts.map(() => 40));
    });
  }
});
