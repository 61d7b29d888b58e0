import { describe, expect, it } from 'vitest';
import {
  CHAT_MESSAGE_OVERHEAD,
  CHAT_PROMPT_OVERHEAD,
  countChatTokens,
  countTokens,
  OUTPUT_WORDS,
  tokenize,
  tokenizeChat,
  tokenizeCompletion,
  tokenPieces,
} from '../../../src/core/sim/index.js';

describe('sim tokenizer', () => {
  it('splits by the documented rules', () => {
    expect(tokenPieces('Hello, world!')).toEqual(['Hello', ',', ' world', '!']);
    // words longer than 8 characters are cut every 8
    expect(tokenPieces('internationalization')).toEqual(['internat', 'ionaliza', 'tion']);
    // whitespace attaches to the following piece; trailing whitespace is a token of its own
    expect(tokenPieces('a  b\n')).toEqual(['a', '  b', '\n']);
    // one token per CJK character, one per emoji
    expect(tokenPieces('你好 ok😀')).toEqual(['你', '好', ' ok', '😀']);
    expect(countTokens('')).toBe(0);
  });

  it('is exact and deterministic: counts match ids, pieces join back to the text', () => {
    const texts = [
      'The quick brown fox jumps over the lazy dog.',
      '  leading',
      'x'.repeat(100),
      'tab\tand\nnew line',
      '数字 123456789 end',
    ];
    for (const t of texts) {
      expect(tokenPieces(t).join('')).toBe(t);
      expect(tokenize(t)).toHaveLength(countTokens(t));
      expect(tokenize(t)).toEqual(tokenize(t));
    }
    expect(tokenize('same')[0]).toBe(tokenize('same')[0]);
    expect(tokenize('same')[0]).not.toBe(tokenize('other')[0]);
  });

  it('adds the documented template tokens for chat and BOS for completions', () => {
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Hello there' }] },
    ];
    const content = countTokens('Be brief.') + countTokens('Hello there');
    expect(countChatTokens(messages)).toBe(content + 2 * CHAT_MESSAGE_OVERHEAD + CHAT_PROMPT_OVERHEAD);
    expect(tokenizeChat(messages)).toHaveLength(countChatTokens(messages));
    expect(tokenizeChat(messages, false)).toHaveLength(countChatTokens(messages) - 3);
    expect(tokenizeCompletion('Hello there')).toHaveLength(countTokens('Hello there') + 1);
    expect(tokenizeCompletion('Hello there', false)).toHaveLength(countTokens('Hello there'));
  });

  it('generates words that are exactly one token each, so output text re-tokenizes to its count', () => {
    for (const w of OUTPUT_WORDS) expect(countTokens(w)).toBe(1);
    const text = OUTPUT_WORDS.join('') + OUTPUT_WORDS.join('');
    expect(countTokens(text)).toBe(2 * OUTPUT_WORDS.length);
  });
});
