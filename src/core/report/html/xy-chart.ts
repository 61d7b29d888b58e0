import { esc } from './escape.js';
import { makeScale } from './scale.js';

/** One point; lo/hi draw a whisker (a confidence interval or a range); label is written beside it. */
export interface XyPoint {
  x: number;
  y: number;
  lo?: number | null;
  hi?: number | null;
  label?: string;
}

/** A line of points; colour index into the palette; dashed for a second percentile of the same series. */
export interface XySeries {
  name: string;
  color: number;
  dashed?: boolean;
  points: XyPoint[];
}

/** A chart of lines with whiskers: throughput and latency against load, and the Pareto view. */
export interface XyChart {
  id: string;
  title: string;
  xLabel: string;
  yLabel: string;
  series: XySeries[];
  logX?: boolean;
  /** Ticks on x at these values (the levels' loads) instead of round numbers. */
  xTicks?: number[];
  note?: string;
  /** Shades the region at or above this y (e.g. per-user tok/s an SLO asks for), titled. */
  shadeAbove?: { y: number; title: string };
}

const W = 440;
const H = 260;
const M = { l: 50, r: 12, t: 12, b: 40 };
const f1 = (v: number): string => v.toFixed(1);

/** The chart as an inline SVG figure (no script, prints crisply, follows the page's colours). */
export function renderXyChart(chart: XyChart): string {
  const pts = chart.series.flatMap((s) => s.points).filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
  if (pts.length === 0) {
    return `<figure class="chart" id="${chart.id}"><figcaption>${esc(chart.title)}</figcaption><p class="empty">No data.</p></figure>`;
  }
  const xs = pts.map((p) => p.x);
  const ys = pts.flatMap((p) => [p.y, p.lo ?? p.y, p.hi ?? p.y]).filter(Number.isFinite);
  const xLo = Math.min(...xs);
  const xHi = Math.max(...xs);
  const sx = makeScale(xLo, xHi, M.l, W - M.r, chart.logX, false);
  const sy = makeScale(Math.min(...ys), Math.max(...ys) * 1.05, H - M.b, M.t, false, true);
  const out: string[] = [];
  out.push(
    `<svg viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(chart.title)}" class="xy" data-points="${pts.length}">`,
  );
  if (chart.shadeAbove && Number.isFinite(chart.shadeAbove.y)) {
    const y = Math.min(H - M.b, Math.max(M.t, sy.map(chart.shadeAbove.y)));
    out.push(
      `<rect class="slo-band" x="${M.l}" y="${M.t}" width="${W - M.r - M.l}" height="${f1(y - M.t)}"><title>${esc(chart.shadeAbove.title)}</title></rect>`,
    );
  }
  for (const t of sy.ticks) {
    const y = f1(sy.map(t));
    out.push(`<line class="grid" x1="${M.l}" x2="${W - M.r}" y1="${y}" y2="${y}"/>`);
    out.push(`<text class="tick" x="${M.l - 6}" y="${y}" text-anchor="end" dy="0.32em">${sy.format(t)}</text>`);
  }
  const xTicks = chart.xTicks ?? (chart.logX ? sx.ticks : sx.ticks.length > 1 ? sx.ticks : [...new Set(xs)]);
  for (const t of xTicks) {
    const x = f1(sx.map(t));
    out.push(`<line class="grid" x1="${x}" x2="${x}" y1="${M.t}" y2="${H - M.b}"/>`);
    out.push(`<text class="tick" x="${x}" y="${H - M.b + 14}" text-anchor="middle">${sx.format(t)}</text>`);
  }
  out.push(`<line class="axis" x1="${M.l}" x2="${W - M.r}" y1="${H - M.b}" y2="${H - M.b}"/>`);
  out.push(`<line class="axis" x1="${M.l}" x2="${M.l}" y1="${M.t}" y2="${H - M.b}"/>`);
  out.push(
    `<text class="label" x="${(M.l + W - M.r) / 2}" y="${H - 6}" text-anchor="middle">${esc(chart.xLabel)}</text>`,
  );
  out.push(
    `<text class="label" transform="translate(13 ${(M.t + H - M.b) / 2}) rotate(-90)" text-anchor="middle">${esc(chart.yLabel)}</text>`,
  );
  for (const s of chart.series) {
    const ok = s.points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
    if (ok.length === 0) continue;
    const cls = `s c${s.color % 6}${s.dashed ? ' dashed' : ''}`;
    const d = ok.map((p, i) => `${i ? 'L' : 'M'}${f1(sx.map(p.x))} ${f1(sy.map(p.y))}`).join('');
    out.push(`<g class="${cls}"><title>${esc(s.name)}</title><path class="line" d="${d}"/>`);
    for (const p of ok) {
      const x = f1(sx.map(p.x));
      if (typeof p.lo === 'number' && typeof p.hi === 'number' && Number.isFinite(p.lo) && Number.isFinite(p.hi)) {
        const y0 = f1(sy.map(p.lo));
        const y1 = f1(sy.map(p.hi));
        out.push(`<path class="whisker" d="M${x} ${y0}V${y1}M${Number(x) - 4} ${y0}h8M${Number(x) - 4} ${y1}h8"/>`);
      }
      out.push(`<circle cx="${x}" cy="${f1(sy.map(p.y))}" r="3"/>`);
      if (p.label)
        out.push(`<text class="pt" x="${Number(x) + 5}" y="${Number(f1(sy.map(p.y))) - 5}">${esc(p.label)}</text>`);
    }
    out.push('</g>');
  }
  out.push('</svg>');
  const legend = chart.series
    .map((s) => `<span class="key c${s.color % 6}${s.dashed ? ' dashed' : ''}"><i></i>${esc(s.name)}</span>`)
    .join('');
  return `<figure class="chart" id="${chart.id}"><figcaption>${esc(chart.title)}</figcaption>${out.join('')}<div class="legend">${legend}</div>${chart.note ? `<p class="note">${esc(chart.note)}</p>` : ''}</figure>`;
}
