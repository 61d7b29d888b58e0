import { fillerWords, fit } from '../load/prompts.js';

/** Counts the tokens of one text as the request will carry it (alone, or inside its messages). */
export type TextCount = (text: string) => Promise<number | null>;

/** The fitted text and the server's count of it (null when the server could not count). */
export interface FittedText {
  text: string;
  tokens: number | null;
}

/**
 * Pads or cuts a real text to exactly `target` tokens by the server's count: a text that fits is kept as it is;
 * a longer one is cut after a word (shrinking until it fits), keeping the kept part's own whitespace (newlines and
 * indents of code); then seeded filler words, one token each, make up the rest.
 */
export async function fitText(source: string, target: number, count: TextCount, seed: number): Promise<FittedText> {
  // Where each word ends in the source: a cut keeps the source up to there, whitespace and all.
  const ends = [...source.matchAll(/\S+/g)].map((m) => m.index + m[0].length);
  const headOf = (cut: number): string => (cut >= ends.length ? source : source.slice(0, ends[cut - 1] ?? 0));
  let cut = ends.length;
  let head = headOf(cut);
  let tokens = await count(head);
  if (tokens === null) return { text: head, tokens: null };
  for (let step = 0; step < 16 && tokens > target && cut > 0; step++) {
    // Aim a little under: filler words then add back the last few tokens exactly.
    cut = Math.min(cut - 1, Math.floor(((cut * target) / tokens) * 0.97));
    cut = Math.max(0, cut);
    head = headOf(cut);
    tokens = await count(head);
    if (tokens === null) return { text: head, tokens: null };
  }
  if (tokens === target) return { text: head, tokens };
  // Filler goes after the text, a space apart unless the text already ends in whitespace (or is empty).
  const gap = head === '' || /\s$/.test(head) ? '' : ' ';
  const fitted = await fit(
    (n) => (n === 0 ? head : head + gap + fillerWords(n, seed).join(' ')),
    target,
    Math.max(0, target - tokens),
    count,
  );
  return { text: fitted.text, tokens: fitted.tokens };
}
