import { describe, expect, it } from 'vitest';
import { buildPrompts, composePrompt, fit, PADS } from '../../../src/core/load/prompts.js';
import { bytePairCount } from '../../fakes/byte-pair-vocab.js';

/** A counter over a vocabulary, as the server's /tokenize answers: the template's 6 tokens and BOS around the text. */
const counterOf = (count: (text: string) => number) => async (text: string) => 7 + count(text);
const make = (f: number): string => composePrompt(['the', 'of', 'and'], f, 42);

describe('prompt calibration on any vocabulary', () => {
  it('one token per word: exact in a step or two, no pad', async () => {
    const words = (t: string) => t.split(/\s+/).filter(Boolean).length;
    let asked = 0;
    const counter = async (t: string) => (asked++, 7 + words(t));
    const fitted = await fit(make, 64, 52, counter);
    expect(fitted).toMatchObject({ tokens: 64, padding: '' });
    expect(fitted.inexact).toBeUndefined();
    expect(asked).toBeLessThanOrEqual(2);
  });

  it.each([64, 65, 97, 300, 1024])(
    'a byte-level BPE vocabulary whose words cost 2-4 tokens: exactly %i, topped up with one-token pads',
    async (target) => {
      const counter = counterOf(bytePairCount);
      const fitted = await fit(make, target, target - 12, counter);
      expect(fitted.tokens).toBe(target);
      expect(await counter(fitted.text)).toBe(target);
      expect(fitted.inexact).toBeUndefined();
    },
  );

  it('a vocabulary of bytes without merges (every character a token): exact, with the pad that is one token there', async () => {
    const counter = counterOf((t) => [...t].length);
    const fitted = await fit(make, 200, 188, counter);
    expect(fitted.tokens).toBe(200);
    expect(fitted.padding).toMatch(/^\.+$/);
  });

  it('prompts built for a level are all exact on the byte-level vocabulary, each with its own unique prefix', async () => {
    const counter = counterOf(bytePairCount);
    const prompts = await buildPrompts({
      count: 40,
      targetTokens: 64,
      runNonce: 7,
      firstIndex: 0,
      uniquePrefix: true,
      counter,
    });
    const counts = await Promise.all(prompts.map((p) => counter(p.text)));
    expect(counts).toEqual(prompts.map(() => 64));
    expect(new Set(prompts.map((p) => p.text)).size).toBe(40);
    expect(prompts.every((p) => p.inexact === undefined)).toBe(true);
  });

  it('says in one line why when no pad is one token: the reached count, the cost per word and the pads tried', async () => {
    // Every piece costs 3 tokens: nothing adds 1 or 2.
    const counter = counterOf((t) => 3 * t.split(/(?=[ .,])/).filter(Boolean).length);
    const fitted = await fit(make, 65, 52, counter);
    expect(fitted.tokens).not.toBe(65);
    expect(fitted.inexact).toMatch(
      /^prompt calibration reached \d+ tokens, not 65: the filler words cost about 3 tokens each/,
    );
    for (const pad of PADS) expect(fitted.inexact).toContain(`'${pad}'`);
    expect(fitted.inexact?.split('\n')).toHaveLength(1);
  });

  it('says when the fixed part alone is longer than the target', async () => {
    const fitted = await fit(make, 5, 0, counterOf(bytePairCount));
    expect(fitted.inexact).toMatch(/fixed part .* alone is \d+ tokens, more than 5/);
  });
});
