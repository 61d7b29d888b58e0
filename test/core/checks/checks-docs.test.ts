import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHECKS } from '../../../src/core/checks/registry.js';
import { renderChecksReference } from '../../../src/core/checks/reference.js';
import { CHECK_CATALOG } from '../../../src/shared/check-catalog.js';

const DOC = new URL('../../../docs/checks.md', import.meta.url);
const BLOCK = /<!-- checks:begin -->\n([\s\S]*?)<!-- checks:end -->/;

describe('docs/checks.md', () => {
  it('is the list the registry renders (regenerate: SB_WRITE_DOCS=1 npx vitest run this file)', () => {
    let doc = readFileSync(DOC, 'utf8');
    if (process.env.SB_WRITE_DOCS === '1') {
      doc = doc.replace(BLOCK, `<!-- checks:begin -->\n${renderChecksReference()}\n<!-- checks:end -->`);
      writeFileSync(DOC, doc);
    }
    expect(doc.match(BLOCK)?.[1]).toBe(`${renderChecksReference()}\n`);
  });

  it('lists every check of the catalog once, in its order, each with a rule', () => {
    expect(CHECKS.map((c) => c.id)).toEqual(CHECK_CATALOG.map((c) => c.id));
    for (const c of CHECK_CATALOG) expect(renderChecksReference()).toContain(`| \`${c.id}\` | ${c.title} |`);
  });
});
