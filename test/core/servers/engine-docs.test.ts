import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderEngineTable } from '../../../src/core/servers/engines/table.js';

const DOC = new URL('../../../docs/servers.md', import.meta.url);

describe('docs/servers.md', () => {
  it('has the table of engines the registry renders (regenerate: SB_WRITE_DOCS=1 npx vitest run this file)', () => {
    let doc = readFileSync(DOC, 'utf8');
    if (process.env.SB_WRITE_DOCS === '1') {
      doc = doc.replace(
        /<!-- engines:begin -->\n[\s\S]*?<!-- engines:end -->/,
        `<!-- engines:begin -->\n${renderEngineTable()}\n<!-- engines:end -->`,
      );
      writeFileSync(DOC, doc);
    }
    const match = doc.match(/<!-- engines:begin -->\n([\s\S]*?)<!-- engines:end -->/);
    expect(match, 'docs/servers.md lacks the <!-- engines:begin --> ... <!-- engines:end --> block').not.toBeNull();
    expect(match?.[1]).toBe(`${renderEngineTable()}\n`);
  });
});
