import { describe, expect, it } from 'vitest';
import { fitText } from '../../../src/core/workloads/fit-text.js';

/** One token per word, as the simulator counts plain text. */
const words = async (text: string): Promise<number> => text.split(/\s+/).filter(Boolean).length;

const code = 'def add(a, b):\n    return a + b\n\n\tprint(add(1,  2))\n';

describe('fitText', () => {
  it('keeps a prompt that fits exactly as it is: newlines, indents and double spaces', async () => {
    const fitted = await fitText(code, 9, words, 1);
    expect(fitted).toEqual({ text: code, tokens: 9 });
  });

  it('keeps the text as it is and adds filler after it when it is short', async () => {
    const fitted = await fitText(code, 13, words, 1);
    expect(fitted.tokens).toBe(13);
    expect(fitted.text.startsWith(code)).toBe(true);
    expect(await words(fitted.text.slice(code.length))).toBe(4);
  });

  it('cuts a long prompt after a word, keeping the whitespace of the part it keeps', async () => {
    const fitted = await fitText(code, 6, words, 1);
    expect(fitted.tokens).toBe(6);
    // Cut a little short (then filler makes up the rest): the kept lines keep their newline and indent.
    expect(fitted.text).toMatch(/^def add\(a, b\):\n {4}return a \S+$/);
  });
});
