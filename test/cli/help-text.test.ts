import { describe, expect, it } from 'vitest';
import { wrapHelp } from '../../src/cli/help-text.js';

const words = (text: string): string[] => text.split(/\s+/).filter(Boolean);

describe('wrapHelp', () => {
  const text = [
    'Usage: servebench thing RUN_OR_FILE RUN_OR_FILE [...] [--format html|md] [--out FILE] [--seed N]',
    '',
    'A paragraph written for a wide terminal, broken where its author liked, which is far wider than eighty',
    'columns and goes on (with a second line) until it says all it means to say.',
    '',
    'Options:',
    '  --short X        fits',
    '  --long-flag V    a description that runs past the eightieth column of the terminal and must wrap under itself',
    '                   html      a sub-entry whose own text is long enough to run past eighty columns too',
  ].join('\n');

  it('fits every line in the width, keeps every word in order, and leaves what fits as written', () => {
    const out = wrapHelp(text, 80);
    for (const line of out.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(words(out)).toEqual(words(text));
    expect(out).toContain('\nOptions:\n  --short X        fits\n');
    expect(wrapHelp('  --a  b\nshort prose', 80)).toBe('  --a  b\nshort prose');
  });

  it('wraps an entry under its text column, a sub-entry under its own, prose under nothing, usage under the command', () => {
    const lines = wrapHelp(text, 80).split('\n');
    expect(lines[1]).toMatch(/^ {7}\S/);
    const entry = lines.findIndex((l) => l.startsWith('  --long-flag V'));
    expect(lines[entry + 1]).toMatch(/^ {19}\S/);
    const sub = lines.findIndex((l) => l.startsWith(' '.repeat(19) + 'html'));
    expect(lines[sub + 1]).toMatch(/^ {29}\S/);
    const para = lines.findIndex((l) => l.startsWith('A paragraph'));
    expect(lines[para + 1]).toMatch(/^\S/);
    // The author's break inside a paragraph is not kept: it is refilled.
    expect(lines[para]!.length).toBeGreaterThan(70);
  });
});
