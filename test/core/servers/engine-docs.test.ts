import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderEngineTable, renderOptionTable } from '../../../src/core/servers/engines/table.js';

const DOC = new URL('../../../docs/servers.md', import.meta.url);
const BLOCKS = { engines: renderEngineTable, options: renderOptionTable };

describe('docs/servers.md', () => {
  it.each(Object.keys(BLOCKS) as Array<keyof typeof BLOCKS>)(
    'has the %s table the registry renders (regenerate: SB_WRITE_DOCS=1 npx vitest run this file)',
    (name) => {
      const block = new RegExp(`<!-- ${name}:begin -->\\n[\\s\\S]*?<!-- ${name}:end -->`);
      let doc = readFileSync(DOC, 'utf8');
      if (process.env.SB_WRITE_DOCS === '1') {
        doc = doc.replace(block, `<!-- ${name}:begin -->\n${BLOCKS[name]()}\n<!-- ${name}:end -->`);
        writeFileSync(DOC, doc);
      }
      const match = doc.match(new RegExp(`<!-- ${name}:begin -->\\n([\\s\\S]*?)<!-- ${name}:end -->`));
      expect(match, `docs/servers.md lacks the <!-- ${name}:begin --> ... <!-- ${name}:end --> block`).not.toBeNull();
      expect(match?.[1]).toBe(`${BLOCKS[name]()}\n`);
    },
  );
});
