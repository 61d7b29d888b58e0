import { fmtNumber, fmtRatio } from '../../../shared/format.js';
import type { Comparison } from './compare.js';
import { definitionNotes } from './definition-notes.js';
import { Footnotes, baselineText, fmtDiffCi, fmtRatioCi, likeForLikeText, methodText, offeredLine } from './format.js';
import { loadText } from './types.js';
import { mdText as cell } from '../markdown-escape.js';

/** The comparison as Markdown: conditions, like-for-like, then per matching level the figures with verdicts. */
export function compareMarkdown(c: Comparison): string {
  const out: string[] = [];
  const names = c.series.map((s) => cell(s.label));
  out.push(`# servebench compare: ${names.join(' vs ')}`, '');
  if (c.series.some((s) => s.conditions.simulated))
    out.push('> **SIMULATED**: at least one series comes from the built-in simulator, not a GPU.', '');
  out.push(cell(baselineText(c)), '', '## Conditions', '');
  out.push(`| condition | ${names.join(' | ')} |`, `| --- |${names.map(() => ' --- |').join('')}`);
  for (const r of c.conditions)
    out.push(`| ${r.differs ? `**${cell(r.label)}** (differs)` : cell(r.label)} | ${r.values.map(cell).join(' | ')} |`);
  out.push('');
  const base = c.series[0];
  c.series.forEach((s, i) => {
    const l = c.likeForLike[i];
    if (i > 0 && base && l) out.push(`- ${cell(likeForLikeText(l, s, base))}`);
  });
  for (const s of c.series) for (const n of s.notes) out.push(`- ${cell(s.label)}: ${cell(n)}`);
  for (const d of definitionNotes(c))
    out.push('', `**${cell(d.label)}: how its figures were read**`, '', ...d.lines.map((l) => `- ${cell(l)}`));
  const notes = new Footnotes();
  for (const level of c.levels) {
    const s = c.series[level.series];
    if (!s || !base) continue;
    out.push(
      '',
      `## ${cell(loadText(level.load, level.lengths))}: ${cell(s.label)} against ${cell(base.label)}${level.partial ? ' (a level was cut short)' : ''}`,
      '',
    );
    const offered = offeredLine(level, c);
    if (offered) out.push(cell(offered), '');
    out.push(
      `| figure | ${cell(base.label)} | ${cell(s.label)} | ratio | 95 % CI of the difference | 95 % CI of the ratio | verdict |`,
      '| --- | ---: | ---: | ---: | ---: | ---: | --- |',
    );
    for (const f of level.figures) {
      const verdict = f.why ? `${f.verdict} [${notes.ref(f.why)}]` : f.verdict;
      out.push(
        `| ${cell(f.label)} (${cell(f.unit)}) | ${fmtNumber(f.baseline)} | ${fmtNumber(f.value)} | ${fmtRatio(f.ratio)} | ${cell(fmtDiffCi(f))} | ${cell(fmtRatioCi(f))} | ${cell(verdict)} |`,
      );
    }
  }
  if (c.levels.length === 0) out.push('', '_No load was measured by both the baseline and another series._');
  if (c.unmatched.length) out.push('', '## Loads not compared', '', ...c.unmatched.map((u) => `- ${cell(u)}`));
  if (notes.list.length) out.push('', '## Notes', '', ...notes.list.map((n, i) => `${i + 1}. ${cell(n)}`));
  out.push('', '## Method', '', cell(methodText(c)), '');
  return out.join('\n');
}
