import { fmtNumber, fmtRatio } from '../../../shared/format.js';
import { stripControls } from '../../../shared/control-chars.js';
import type { Comparison } from './compare.js';
import { definitionNotes } from './definition-notes.js';
import { Footnotes, baselineText, fmtDiffCi, fmtRatioCi, likeForLikeText, methodText } from './format.js';
import { loadText } from './types.js';

/** Text from a file as the terminal shows it, on one line: controls and bidi marks gone, tab and newline a space. */
function plain(text: string): string {
  return stripControls(text).replace(/[\t\n]/g, ' ');
}

/** Rows as columns padded to their widest cell: the first and last (words) left-aligned, figures right-aligned. */
function table(rows: string[][]): string[] {
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) =>
    r
      .map((cell, i) =>
        i === 0 ? cell.padEnd(widths[i] ?? 0) : i === r.length - 1 ? cell : cell.padStart(widths[i] ?? 0),
      )
      .join('  ')
      .trimEnd(),
  );
}

/** The comparison as plain text for a terminal: the same sections as the Markdown, as aligned tables. */
export function compareText(c: Comparison): string {
  const names = c.series.map((s) => plain(s.label));
  const base = c.series[0];
  const out: string[] = [`servebench compare: ${names.join(' vs ')}`];
  if (c.series.some((s) => s.conditions.simulated))
    out.push('SIMULATED: at least one series comes from the built-in simulator, not a GPU.');
  out.push(plain(baselineText(c)), '', 'Conditions');
  out.push(
    ...table([
      ['condition', ...names],
      ...c.conditions.map((r) => [`${r.label}${r.differs ? ' (differs)' : ''}`, ...r.values.map(plain)]),
    ]),
  );
  c.series.forEach((s, i) => {
    const l = c.likeForLike[i];
    if (i > 0 && base && l) out.push(`- ${plain(likeForLikeText(l, s, base))}`);
  });
  for (const s of c.series) for (const n of s.notes) out.push(`- ${plain(s.label)}: ${plain(n)}`);
  for (const d of definitionNotes(c))
    out.push('', `${plain(d.label)}: how its figures were read`, ...d.lines.map((l) => `- ${plain(l)}`));
  const notes = new Footnotes();
  for (const level of c.levels) {
    const s = c.series[level.series];
    if (!s || !base) continue;
    out.push(
      '',
      `${loadText(level.load, level.lengths)}: ${plain(s.label)} against ${plain(base.label)}${level.partial ? ' (a level was cut short)' : ''}`,
    );
    const rows = level.figures.map((f) => [
      `${plain(f.label)} (${f.unit})`,
      fmtNumber(f.baseline),
      fmtNumber(f.value),
      fmtRatio(f.ratio),
      fmtDiffCi(f),
      fmtRatioCi(f),
      f.why ? `${f.verdict} [${notes.ref(plain(f.why))}]` : f.verdict,
    ]);
    out.push(
      ...table([
        ['figure', plain(base.label), plain(s.label), 'ratio', 'CI of diff', 'CI of ratio', 'verdict'],
        ...rows,
      ]),
    );
  }
  if (c.levels.length === 0) out.push('', 'No load was measured by both the baseline and another series.');
  if (c.unmatched.length) out.push('', 'Loads not compared', ...c.unmatched.map((u) => `- ${plain(u)}`));
  if (notes.list.length) out.push('', 'Notes', ...notes.list.map((n, i) => `${i + 1}. ${n}`));
  out.push('', 'Method', methodText(c), '');
  return out.join('\n');
}
