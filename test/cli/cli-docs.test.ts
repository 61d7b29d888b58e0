import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderCliReference } from '../../src/cli/cli-reference.js';
import { runOptions } from '../../src/cli/run-options.js';

const DOC = new URL('../../docs/cli.md', import.meta.url);
const BLOCK = /<!-- run-flags:begin -->\n([\s\S]*?)<!-- run-flags:end -->/;

describe('docs/cli.md', () => {
  it('is the reference the settings render (regenerate: SB_WRITE_DOCS=1 npx vitest run this file)', () => {
    let doc = readFileSync(DOC, 'utf8');
    if (process.env.SB_WRITE_DOCS === '1') {
      doc = doc.replace(BLOCK, `<!-- run-flags:begin -->\n${renderCliReference()}\n<!-- run-flags:end -->`);
      writeFileSync(DOC, doc);
    }
    expect(doc.match(BLOCK)?.[1]).toBe(`${renderCliReference()}\n`);
  });

  it('lists every flag `servebench run` takes', () => {
    const reference = renderCliReference();
    for (const flag of Object.keys(runOptions)) expect(reference, flag).toContain(`--${flag}`);
  });
});
