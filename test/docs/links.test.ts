import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { marked, type Token, type Tokens } from 'marked';
import { describe, expect, it } from 'vitest';

const root = normalize(join(import.meta.dirname, '..', '..'));

/** The files a clone has: tracked ones and untracked ones git does not ignore (what `git add -A` would commit). */
const cloned = new Set(
  execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
    .split('\0')
    .filter(Boolean),
);
const folders = new Set(
  [...cloned].flatMap((f) =>
    f
      .split('/')
      .slice(0, -1)
      .map((_, i, p) => p.slice(0, i + 1).join('/')),
  ),
);

/** The README and every page under docs/: what a newcomer reads. */
const pages = [...cloned].filter((f) => f === 'README.md' || (f.startsWith('docs/') && f.endsWith('.md'))).sort();

/** Every token of a page, nested ones included. */
function walk(tokens: readonly Token[], out: Token[] = []): Token[] {
  for (const t of tokens) {
    out.push(t);
    const nested = t as {
      tokens?: Token[];
      items?: Token[];
      header?: { tokens: Token[] }[];
      rows?: { tokens: Token[] }[][];
    };
    if (nested.tokens) walk(nested.tokens, out);
    if (nested.items) walk(nested.items, out);
    for (const cell of [...(nested.header ?? []), ...(nested.rows ?? []).flat()]) walk(cell.tokens, out);
  }
  return out;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(tokens: readonly Token[]): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const t of walk(tokens)) {
    if (t.type !== 'heading') continue;
    const base = (t as Tokens.Heading).text
      .toLowerCase()
      .replace(/<[^>]+>|[`*_]/g, '')
      .replace(/[^\p{L}\p{N} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

const lexed = new Map(pages.map((p) => [p, marked.lexer(readFileSync(join(root, p), 'utf8'))]));

/** Link and image targets of a page, HTML ones included. */
function targets(page: string): string[] {
  const out: string[] = [];
  for (const t of walk(lexed.get(page) ?? [])) {
    if (t.type === 'link' || t.type === 'image') out.push((t as Tokens.Link).href);
    if (t.type === 'html') for (const m of t.raw.matchAll(/\b(?:href|src)="([^"]+)"/g)) out.push(m[1]!);
  }
  return out;
}

/** Where a relative target leads, or why it does not lead to a file of the repository. */
function resolveTarget(page: string, target: string): { file: string; anchor?: string } | { problem: string } {
  const [path = '', anchor] = target.split('#');
  const file = path === '' ? page : relative(root, normalize(join(root, dirname(page), decodeURI(path))));
  if (file.startsWith('..')) return { problem: 'leads out of the repository' };
  if (!cloned.has(file) && !folders.has(file.replace(/\/$/, ''))) return { problem: 'is no file of the repository' };
  return anchor ? { file, anchor } : { file };
}

/** What a clone does not have: the folder beside the repository, the machine's own paths, a design kept outside. */
const OUTSIDE = /\.\.\/shared\b|\/work\/|DESIGN\.md/;
/** A path a recipe fills in (`src/core/report/NAME.ts`). */
const PLACEHOLDER = /(^|[/._-])(NAME|ID)([/._-]|$)/;
/** Another project's path (`src/guidellm/...` in a page on other tools): its first two folders are none of ours. */
const foreign = (path: string): boolean =>
  path.split('/').length > 2 && !folders.has(path.split('/').slice(0, 2).join('/'));

describe.each(pages)('%s', (page) => {
  const text = readFileSync(join(root, page), 'utf8');

  it('points nowhere outside the repository', () => {
    expect(text.split('\n').filter((line) => OUTSIDE.test(line))).toEqual([]);
    for (const target of targets(page)) expect(target, `${page} links ${target}`).not.toMatch(/^(\/|file:|~)/);
  });

  it('links only files (and headings) the repository has', () => {
    const problems: string[] = [];
    for (const target of targets(page)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // a web address
      const to = resolveTarget(page, target);
      if ('problem' in to) problems.push(`${target} ${to.problem}`);
      else if (to.anchor && to.file.endsWith('.md') && !anchorsOf(lexed.get(to.file) ?? []).has(to.anchor))
        problems.push(`${target}: ${to.file} has no heading #${to.anchor}`);
    }
    expect(problems).toEqual([]);
  });

  it('names only repository files that exist, where it names one as code', () => {
    const missing = walk(lexed.get(page) ?? [])
      .filter((t): t is Tokens.Codespan => t.type === 'codespan')
      .map((t) => t.text)
      .filter((s) => /^(src|test|docs|bench|scripts|resources|build)\/[\w./-]+$/.test(s) && !/\.\.|\/\//.test(s))
      .filter((s) => !PLACEHOLDER.test(s) && !foreign(s))
      .filter((s) => !cloned.has(s) && !folders.has(s.replace(/\/$/, '')));
    expect(missing).toEqual([]);
  });
});

describe('the pages checked', () => {
  it('are the README and every page under docs/', () => {
    expect(pages).toContain('README.md');
    expect(pages.filter((p) => p.startsWith('docs/')).length).toBeGreaterThan(5);
  });
});
