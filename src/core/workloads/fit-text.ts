import { fillerWords, fit } from '../load/prompts.js';

/** Counts the tokens of one text as the request will carry it (alone, or inside its messages). */
export type TextCount = (text: string) => Promise<number | null>;

/** The fitted text and the server's count of it (null when the server could not count). */
export interface FittedText {
  text: string;
  tokens: number | null;
}

/**
 * Pads or cuts a real text to exactly `target` tokens by the server's count: the text is cut at a word (shrinking
 * until it fits), then seeded filler words, one token each, make up the rest.
 */
export async function fitText(source: string, target: number, count: TextCount, seed: number): Promise<FittedText> {
  const words = source.split(/\s+/).filter((w) => w.length > 0);
  let cut = words.length;
  let head = words.join(' ');
  let tokens = await count(head);
  if (tokens === null) return { text: head, tokens: null };
  for (let step = 0; step < 16 && tokens > target && cut > 0; step++) {
    // Aim a little under: filler words then add back the last few tokens exactly.
    cut = Math.min(cut - 1, Math.floor(((cut * target) / tokens) * 0.97));
    cut = Math.max(0, cut);
    head = words.slice(0, cut).join(' ');
    tokens = await count(head);
    if (tokens === null) return { text: head, tokens: null };
  }
  if (tokens === target) return { text: head, tokens };
  const fitted = await fit(
    (n) => [head, ...fillerWords(n, seed)].filter((w) => w.length > 0).join(' '),
    target,
    Math.max(0, target - tokens),
    count,
  );
  return { text: fitted.text, tokens: fitted.tokens };
}
