/**
 * A small byte-level BPE vocabulary as llama.cpp tokenizes with one (src/llama-vocab.cpp, LLAMA_VOCAB_PRE_TYPE_GPT2):
 * the text is split by GPT-2's pre-tokenizer pattern (a word keeps its leading space; digits and punctuation are
 * pieces of their own), then each piece is merged as far as the vocabulary's merges go. This one's merges join at
 * most two bytes, as in a model whose tokenizer was trained small (random-weight test models): ' a', '.' and ' I'
 * are one token, every longer word is several (' the' 2, ' garden' 4).
 */
const GPT2_SPLIT = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

/** The token pieces of a text in this vocabulary. */
export function bytePairPieces(text: string): string[] {
  const pieces: string[] = [];
  for (const m of text.matchAll(GPT2_SPLIT)) {
    const word = m[0];
    for (let i = 0; i < word.length; i += 2) pieces.push(word.slice(i, i + 2));
  }
  return pieces;
}

/** Tokens of a text in this vocabulary. */
export const bytePairCount = (text: string): number => bytePairPieces(text).length;
