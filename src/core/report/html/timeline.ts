import type { RequestRecord } from '../../../shared/request-record.js';
import type { RunRecord } from '../../../shared/run-record.js';
import type { GpuSample } from '../../../shared/telemetry.js';
import { esc } from './escape.js';
import { makeScale } from './scale.js';
import { loadText } from '../../../shared/level-load.js';
import { THROTTLE_KIND_LABELS, THROTTLING, throttleSpans } from '../../../shared/throttle-spans.js';

const W = 900;
const M = { l: 50, r: 12 };
const REQ_H = 220;
const GPU_H = 80;
const GAP = 26;
const f1 = (v: number): string => v.toFixed(1);

interface Metric {
  key: 'smClockMhz' | 'tempC' | 'powerW';
  title: string;
}
const METRICS: Metric[] = [
  { key: 'smClockMhz', title: 'SM clock (MHz)' },
  { key: 'tempC', title: 'temperature (°C)' },
  { key: 'powerW', title: 'power (W)' },
];

type Scale = (ms: number) => string;

/** One panel per GPU metric (clock, temperature, power), a line per GPU, below the requests. */
function gpuPanels(gpuIn: readonly GpuSample[], X: Scale): string[] {
  const out: string[] = [];
  const gpus = [...new Set(gpuIn.map((s) => s.gpu))].sort((a, b) => a - b);
  METRICS.forEach((m, mi) => {
    const y0 = REQ_H + GAP + mi * (GPU_H + GAP);
    const vals = gpuIn.map((s) => s[m.key]).filter((v): v is number => typeof v === 'number');
    out.push(`<text class="panel" x="${M.l}" y="${y0 - 6}">${esc(m.title)}</text>`);
    out.push(`<line class="axis" x1="${M.l}" x2="${W - M.r}" y1="${y0 + GPU_H}" y2="${y0 + GPU_H}"/>`);
    if (vals.length === 0) {
      out.push(`<text class="tick" x="${M.l + 6}" y="${y0 + GPU_H / 2}">not reported</text>`);
      return;
    }
    const lo = vals.reduce((a, b) => Math.min(a, b), Infinity);
    const hi = vals.reduce((a, b) => Math.max(a, b), -Infinity);
    const sy = makeScale(lo, hi * 1.05, y0 + GPU_H, y0, false, true);
    for (const t of sy.ticks) {
      const y = f1(sy.map(t));
      out.push(`<line class="grid" x1="${M.l}" x2="${W - M.r}" y1="${y}" y2="${y}"/>`);
      out.push(`<text class="tick" x="${M.l - 6}" y="${y}" text-anchor="end" dy="0.32em">${sy.format(t)}</text>`);
    }
    gpus.forEach((g, gi) => {
      const pts = gpuIn.filter((s) => s.gpu === g && typeof s[m.key] === 'number');
      if (pts.length === 0) return;
      const d = pts.map((s, i) => `${i ? 'L' : 'M'}${X(s.tMs)} ${f1(sy.map(s[m.key] as number))}`).join('');
      out.push(`<path class="s c${gi % 6} line gpu" d="${d}"><title>GPU ${esc(String(g))}</title></path>`);
    });
  });
  return out;
}

/** Each request's stroke, in send order, by what became of it: waiting then decoding, warm-up, failed, cancelled. */
function requestStrokes(reqs: readonly RequestRecord[], ends: readonly number[], X: Scale, top: number, h: number) {
  const n = reqs.length;
  const wait: string[] = [];
  const decode: string[] = [];
  const warm: string[] = [];
  const failed: string[] = [];
  const cancelled: string[] = [];
  reqs.forEach((r, i) => {
    const y = f1(top + ((i + 0.5) / n) * h);
    const end = ends[i] as number;
    const seg = (a: number, b: number): string => `M${X(a)} ${y}H${X(Math.max(b, a + 1))}`;
    if (!r.ok && r.errorKind === 'cancelled') cancelled.push(seg(r.sendMs, end));
    else if (!r.ok) failed.push(seg(r.sendMs, end));
    else if (r.warmup) warm.push(seg(r.sendMs, end));
    else {
      const first = r.firstTokenMs ?? end;
      wait.push(seg(r.sendMs, first));
      decode.push(seg(first, end));
    }
  });
  return { wait, decode, warm, failed, cancelled };
}

/** The timeline: every request (wait to first token, then decoding) above the GPU's clock, temperature and power, with throttled spans shaded. */
export function renderTimeline(
  record: RunRecord,
  requests: readonly RequestRecord[],
  gpu: readonly GpuSample[],
): string {
  const reqs = [...requests].sort((a, b) => a.sendMs - b.sendMs);
  const ends = reqs.map((r) => r.endMs ?? r.firstTokenMs ?? r.sendMs);
  let t0 = Infinity;
  let t1 = -Infinity;
  for (const r of reqs) t0 = Math.min(t0, r.sendMs);
  for (const e of ends) t1 = Math.max(t1, e);
  for (const l of record.levels) {
    t0 = Math.min(t0, l.startMs);
    t1 = Math.max(t1, l.endMs);
  }
  if (!Number.isFinite(t0) || !(t1 > t0)) {
    return '<figure class="chart wide" id="chart-timeline"><figcaption>Timeline</figcaption><p class="empty">No requests were recorded.</p></figure>';
  }
  const gpuIn = gpu.filter((s) => s.tMs >= t0 && s.tMs <= t1);
  const hasGpu = gpuIn.length > 0;
  const H = REQ_H + (hasGpu ? METRICS.length * (GPU_H + GAP) : 0) + 36;
  const sx = makeScale(t0 / 1000, t1 / 1000, M.l, W - M.r, false, false);
  const X = (ms: number): string => f1(sx.map(ms / 1000));
  const out: string[] = [
    `<svg viewBox="0 0 ${W} ${H}" class="timeline" role="img" aria-label="timeline" data-requests="${reqs.length}">`,
  ];
  const bottom = H - 30;
  // Slowdown spans (src/shared/throttle-spans.ts), shaded across every panel: throttling apart from a power cap.
  for (const s of throttleSpans(gpuIn)) {
    const a = Math.max(s.startMs, t0);
    const b = Math.min(s.endMs, t1);
    if (b <= a) continue;
    const cls = THROTTLING[s.kind] ? 'throttled' : 'power-cap';
    out.push(
      `<rect class="span ${cls}" data-kind="${s.kind}" x="${X(a)}" y="4" width="${f1(Number(X(b)) - Number(X(a)))}" height="${bottom - 4}"><title>${esc(THROTTLE_KIND_LABELS[s.kind])}</title></rect>`,
    );
  }
  // Requests: one horizontal stroke each, in send order.
  const n = reqs.length;
  const top = 16;
  const h = REQ_H - top - 4;
  const sw = Math.max(0.4, Math.min(4, h / Math.max(1, n)));
  const { wait, decode, warm, failed, cancelled } = requestStrokes(reqs, ends, X, top, h);
  out.push(`<text class="panel" x="${M.l}" y="11">requests (${n}), in send order</text>`);
  out.push(`<g stroke-width="${sw.toFixed(2)}">`);
  if (warm.length) out.push(`<path class="req warm" d="${warm.join('')}"/>`);
  if (wait.length) out.push(`<path class="req wait" d="${wait.join('')}"/>`);
  if (decode.length) out.push(`<path class="req decode" d="${decode.join('')}"/>`);
  if (failed.length) out.push(`<path class="req failed" d="${failed.join('')}"/>`);
  if (cancelled.length) out.push(`<path class="req cancelled" d="${cancelled.join('')}"/>`);
  out.push('</g>');
  // Level boundaries.
  for (const l of record.levels) {
    const x = X(l.startMs);
    out.push(`<line class="level" x1="${x}" x2="${x}" y1="14" y2="${bottom}"/>`);
    out.push(`<text class="tick" x="${Number(x) + 3}" y="${top + 8}">${esc(loadText(l, true))}</text>`);
  }
  // GPU panels.
  if (hasGpu) out.push(...gpuPanels(gpuIn, X));
  for (const t of sx.ticks) {
    out.push(`<text class="tick" x="${f1(sx.map(t))}" y="${bottom + 14}" text-anchor="middle">${sx.format(t)}</text>`);
  }
  out.push(
    `<text class="label" x="${(M.l + W - M.r) / 2}" y="${H - 2}" text-anchor="middle">seconds since the run started</text>`,
  );
  out.push('</svg>');
  const legend = [
    '<span class="key wait"><i></i>waiting for the first token</span>',
    '<span class="key decode"><i></i>decoding</span>',
    '<span class="key warm"><i></i>warm-up (discarded)</span>',
    '<span class="key failed"><i></i>failed</span>',
    cancelled.length ? '<span class="key cancelled"><i></i>cancelled when the run stopped</span>' : '',
    hasGpu
      ? '<span class="key throttled"><i></i>thermal / hardware slowdown</span><span class="key power-cap"><i></i>power cap</span>'
      : '',
  ].join('');
  const note = hasGpu ? '' : '<p class="note">No GPU telemetry was recorded for this run.</p>';
  return `<figure class="chart wide" id="chart-timeline"><figcaption>Timeline: requests beside the GPU</figcaption>${out.join('')}<div class="legend">${legend}</div>${note}</figure>`;
}
