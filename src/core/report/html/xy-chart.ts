import type { SloVerdict } from '../../../shared/capacity.js';
import { esc } from './escape.js';
import { placeLabels } from './point-labels.js';
import type { LabelRequest } from './point-labels.js';
import { makeScale } from './scale.js';

/** One point; lo/hi draw a whisker (a confidence interval or a range); label is written beside it. */
interface XyPoint {
  x: number;
  y: number;
  lo?: number | null;
  hi?: number | null;
  label?: string;
  /** The level's verdict against every SLO of the run: the marker shows it (legend added). */
  slo?: SloVerdict;
  /** The capacity the search found: ringed and labelled. */
  capacity?: boolean;
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

const SLO_KEYS: ReadonlyArray<{ verdict: SloVerdict; text: string }> = [
  { verdict: 'meets', text: 'meets every SLO' },
  { verdict: 'fails', text: 'misses an SLO' },
  { verdict: 'uncertain', text: 'uncertain (interval straddles a limit)' },
];

const W = 440;
const H = 260;
const M = { l: 50, r: 12, t: 12, b: 40 };
const f1 = (v: number): string => v.toFixed(1);

/** The chart as an inline SVG figure (no script, prints crisply, follows the page's colours). */
export function renderXyChart(chart: XyChart): string {
  const pts = chart.series.flatMap((s) => s.points).filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
  if (pts.length === 0) {
    // The note may say why there are no points (levels left out on purpose).
    return `<figure class="chart" id="${chart.id}"><figcaption>${esc(chart.title)}</figcaption><p class="empty">No data.</p>${chart.note ? `<p class="note">${esc(chart.note)}</p>` : ''}</figure>`;
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
  const labels: LabelRequest[] = [];
  const markers: Array<{ x0: number; y0: number; x1: number; y1: number }> = [];
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
      const y = f1(sy.map(p.y));
      const r = p.capacity ? 8 : p.slo ? 5 : 3;
      markers.push({ x0: Number(x) - r, y0: Number(y) - r, x1: Number(x) + r, y1: Number(y) + r });
      if (p.capacity)
        out.push(`<circle class="capacity-ring" cx="${x}" cy="${y}" r="8"><title>capacity</title></circle>`);
      if (p.slo)
        out.push(
          `<circle class="slo-${p.slo}" cx="${x}" cy="${y}" r="4.5"><title>${esc(p.label ?? '')}: ${esc(SLO_KEYS.find((k) => k.verdict === p.slo)?.text ?? '')}</title></circle>`,
        );
      else out.push(`<circle cx="${x}" cy="${y}" r="3"/>`);
      const text = p.capacity ? `${p.label ?? ''} capacity`.trim() : p.label;
      // The capacity's label first, then the points in order: crowded labels give way, not overprint.
      if (text)
        labels.push({
          x: Number(x),
          y: Number(y),
          text,
          priority: p.capacity ? -1 : labels.length,
          gap: p.capacity ? 9 : 5,
        });
    }
    out.push('</g>');
  }
  for (const l of placeLabels(labels, { x0: M.l, y0: 0, x1: W, y1: H - M.b }, markers)) {
    if (l.leader)
      out.push(
        `<line class="leader" x1="${f1(l.leader.x1)}" y1="${f1(l.leader.y1)}" x2="${f1(l.leader.x2)}" y2="${f1(l.leader.y2)}"/>`,
      );
    const cls = `pt${l.request.priority < 0 ? ' cap' : ''}`;
    const anchor = l.anchor === 'end' ? ' text-anchor="end"' : '';
    out.push(`<text class="${cls}" x="${f1(l.x)}" y="${f1(l.y)}"${anchor}>${esc(l.text)}</text>`);
  }
  out.push('</svg>');
  const all = chart.series.flatMap((s) => s.points);
  const sloKeys = SLO_KEYS.filter((k) => all.some((p) => p.slo === k.verdict)).map(
    (k) => `<span class="key slo-${k.verdict}"><i></i>${esc(k.text)}</span>`,
  );
  if (all.some((p) => p.capacity)) sloKeys.push('<span class="key capacity-ring"><i></i>capacity</span>');
  const legend =
    chart.series
      .map((s) => `<span class="key c${s.color % 6}${s.dashed ? ' dashed' : ''}"><i></i>${esc(s.name)}</span>`)
      .join('') + sloKeys.join('');
  return `<figure class="chart" id="${chart.id}"><figcaption>${esc(chart.title)}</figcaption>${out.join('')}<div class="legend">${legend}</div>${chart.note ? `<p class="note">${esc(chart.note)}</p>` : ''}</figure>`;
}
