import { fmtNumber, fmtRatio } from '../../../shared/format.js';
import { esc } from '../html/escape.js';
import { REPORT_CSS } from '../html/styles.js';
import { renderXyChart } from '../html/xy-chart.js';
import { compareCharts } from './charts.js';
import type { Comparison, Verdict } from './compare.js';
import { definitionNotes } from './definition-notes.js';
import { Footnotes, baselineText, fmtDiffCi, fmtRatioCi, likeForLikeText, methodText, offeredLine } from './format.js';
import { loadText } from './types.js';

// Only what the report's stylesheet lacks: verdict colours and the marked condition rows.
const COMPARE_CSS = `
td.faster{color:var(--pass);font-weight:600}td.slower{color:var(--fail);font-weight:600}td.same,td.none{color:var(--muted)}
tr.differs td:first-child{font-weight:700}tr.differs td{background:rgba(191,135,0,.10)}
.l4l{margin:4px 0}.l4l.not{color:var(--fail);font-weight:700}
sup{color:var(--muted)}ol.notes{font-size:12px;color:var(--muted)}
`;

const verdictClass = (v: Verdict): string =>
  v === 'faster' ? 'faster' : v === 'slower' ? 'slower' : v === 'no verdict' ? 'none' : 'same';

/** The comparison as one offline HTML file: the report's styles and SVG charts, overlaid per series. */
export function compareHtml(c: Comparison, now: Date = new Date()): string {
  const names = c.series.map((s) => s.label);
  const base = c.series[0];
  const sim = c.series.some((s) => s.conditions.simulated);
  const title = `servebench compare: ${names.join(' vs ')}`;
  const notes = new Footnotes();
  const conditions = `<table id="table-conditions"><thead><tr><th class="t">condition</th>${names
    .map((n) => `<th class="t">${esc(n)}</th>`)
    .join('')}</tr></thead><tbody>${c.conditions
    .map(
      (r) =>
        `<tr class="${r.differs ? 'differs' : ''}"><td class="t">${esc(r.label)}${r.differs ? ' (differs)' : ''}</td>${r.values
          .map((v) => `<td class="t">${esc(v)}</td>`)
          .join('')}</tr>`,
    )
    .join('')}</tbody></table>`;
  const l4l = c.series
    .map((s, i) => {
      const l = c.likeForLike[i];
      if (i === 0 || !l || !base) return '';
      return `<p class="l4l${l.likeForLike ? '' : ' not'}">${esc(likeForLikeText(l, s, base))}</p>`;
    })
    .join('');
  const seriesNotes = c.series.flatMap((s) => s.notes.map((n) => `<li>${esc(s.label)}: ${esc(n)}</li>`));
  const definitions = definitionNotes(c)
    .map(
      (d) =>
        `<h3>${esc(d.label)}: how its figures were read</h3><ul class="note">${d.lines.map((l) => `<li>${esc(l)}</li>`).join('')}</ul>`,
    )
    .join('');
  const levels = c.levels
    .map((level) => {
      const s = c.series[level.series];
      if (!s || !base) return '';
      const rows = level.figures
        .map((f) => {
          const ref = f.why ? `<sup>${notes.ref(f.why)}</sup>` : '';
          return `<tr><td class="t">${esc(f.label)} <small>${esc(f.unit)}</small></td><td>${fmtNumber(f.baseline)}</td><td>${fmtNumber(f.value)}</td><td>${fmtRatio(f.ratio)}</td><td class="nw">${esc(fmtDiffCi(f))}</td><td class="nw">${esc(fmtRatioCi(f))}</td><td class="t ${verdictClass(f.verdict)}">${esc(f.verdict)}${ref}</td></tr>`;
        })
        .join('');
      const offered = offeredLine(level, c);
      return `<h3>${esc(loadText(level.load, level.lengths))}: ${esc(s.label)} against ${esc(base.label)}${level.partial ? ' (a level was cut short)' : ''}</h3>${offered ? `<p class="offered">${esc(offered)}</p>` : ''}
<table class="cmp"><thead><tr><th class="t">figure</th><th>${esc(base.label)}</th><th>${esc(s.label)}</th><th>ratio</th><th>95 % CI of the difference</th><th>95 % CI of the ratio</th><th class="t">verdict</th></tr></thead><tbody>${rows}</tbody></table>`;
    })
    .join('');
  const charts = compareCharts(c.series).map(renderXyChart).join('');
  return [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width,initial-scale=1">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`,
    `<meta name="color-scheme" content="light dark"><title>${esc(title)}</title><style>${REPORT_CSS}${COMPARE_CSS}</style></head><body>`,
    sim ? '<div class="sim-stamp" aria-hidden="true">SIMULATED</div>' : '',
    `<header><h1>${esc(title)}</h1><p class="sub">${esc(baselineText(c))}</p>`,
    sim
      ? '<div class="sim-banner">SIMULATED: at least one series comes from the built-in simulator, not a GPU.</div>'
      : '',
    '</header>',
    `<section id="conditions"><h2>Conditions</h2>${conditions}${l4l}${seriesNotes.length ? `<ul class="note">${seriesNotes.join('')}</ul>` : ''}${definitions}</section>`,
    `<section id="figures"><h2>Figures per load</h2>${levels || '<p class="empty">No load was measured by both the baseline and another series.</p>'}`,
    c.unmatched.length
      ? `<h3>Loads not compared</h3><ul>${c.unmatched.map((u) => `<li>${esc(u)}</li>`).join('')}</ul>`
      : '',
    notes.list.length ? `<ol class="notes">${notes.list.map((n) => `<li>${esc(n)}</li>`).join('')}</ol>` : '',
    '</section>',
    `<section id="charts"><h2>Charts</h2><div class="charts">${charts}</div></section>`,
    `<section id="method"><h2>Method</h2><p>${esc(methodText(c))}</p></section>`,
    `<footer>servebench compare · made ${esc(now.toISOString())} from ${c.series.length} series</footer>`,
    '</body></html>',
  ].join('\n');
}
