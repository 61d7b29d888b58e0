import { QUANTITIES, type QuantityId } from './metrics.js';

/** One percentile a level must pin down: its quantity, percentile, and the largest half-width of its interval as a share of its value. */
export interface PrecisionTarget {
  quantity: QuantityId;
  percentile: number;
  fraction: number;
}

/** The percentiles a bare `--precision 5%` names. */
export const DEFAULT_PRECISION_FIGURES = ['ttft_p95', 'tpot_p95'] as const;

const PERCENTILES = [50, 90, 95, 99];
const NAMES = (Object.keys(QUANTITIES) as QuantityId[])
  .filter((q) => QUANTITIES[q].perRequest !== null)
  .flatMap((q) => PERCENTILES.map((p) => `${q}_p${p}`));

function fractionOf(text: string): number | null {
  const m = /^([0-9]+(?:\.[0-9]+)?)\s*%$/.exec(text.trim());
  const v = m ? Number(m[1]) / 100 : NaN;
  return v > 0 && v < 1 ? v : null;
}

function targetOf(name: string, fraction: number): PrecisionTarget | null {
  const m = /^([a-z0-9]+)_p([0-9]+)$/.exec(name.trim().toLowerCase());
  if (!m || !NAMES.includes(`${m[1]}_p${m[2]}`)) return null;
  return { quantity: m[1] as QuantityId, percentile: Number(m[2]), fraction };
}

/** `5%` or `ttft_p95=5%,tpot_p95=3%` as targets, or the one line that says how to write it. */
export function parsePrecision(text: string): { ok: true; targets: PrecisionTarget[] } | { ok: false; error: string } {
  const how = `write a share such as 5% or NAME=SHARE with NAME one of ${NAMES.join(', ')} (e.g. ttft_p95=5%,tpot_p95=3%)`;
  const bare = fractionOf(text);
  if (bare !== null) {
    return { ok: true, targets: DEFAULT_PRECISION_FIGURES.map((n) => targetOf(n, bare)!) };
  }
  const targets: PrecisionTarget[] = [];
  for (const part of text.split(',').filter((s) => s.trim() !== '')) {
    const [name, share] = part.split('=');
    const fraction = share === undefined ? null : fractionOf(share);
    const target = name === undefined || fraction === null ? null : targetOf(name, fraction);
    if (!target) return { ok: false, error: `cannot read '${part.trim()}' as a precision: ${how}` };
    if (targets.some((t) => t.quantity === target.quantity && t.percentile === target.percentile))
      return { ok: false, error: `'${part.trim()}' is given twice; keep one` };
    targets.push(target);
  }
  if (targets.length === 0) return { ok: false, error: `an empty precision: ${how}` };
  return { ok: true, targets };
}

/** `ttft_p95`. */
export function precisionName(t: Pick<PrecisionTarget, 'quantity' | 'percentile'>): string {
  return `${t.quantity}_p${t.percentile}`;
}

/** A level's --precision result as the record has it (LevelResult's rounds and precision). */
interface PrecisionLevel {
  rounds: ReadonlyArray<{ completed: number; failed: number; windowMs: number; partial?: boolean }>;
  precision?: {
    rounds: number;
    plannedRounds: number;
    figures: ReadonlyArray<{ figure: string; target: number; halfWidth: number | null; reached: boolean }>;
    roundCv: number | null;
    reached: boolean;
  };
}

/** Requests and measured time (ms) a level saved against its fixed plan: its mean round times the rounds not run. */
export function precisionSaved(level: PrecisionLevel): { requests: number; ms: number } | null {
  const p = level.precision;
  const done = level.rounds.filter((r) => r.partial !== true);
  if (!p || done.length === 0) return null;
  const skipped = Math.max(0, p.plannedRounds - p.rounds);
  const mean = (f: (r: (typeof done)[number]) => number) => done.reduce((a, r) => a + f(r), 0) / done.length;
  return { requests: Math.round(skipped * mean((r) => r.completed + r.failed)), ms: skipped * mean((r) => r.windowMs) };
}

function pct(v: number): string {
  return `${(v * 100).toFixed(1)} %`;
}

/**
 * "precision reached after 2 of 5 rounds: ttft_p95 ±3.1 % (asked 5.0 %), ...; 600 requests and 41 s saved", or
 * "did not reach the precision in 5 rounds: ttft_p95 ±7.2 % (asked 5.0 %)"; null without --precision.
 */
export function precisionText(level: PrecisionLevel): string | null {
  const p = level.precision;
  if (!p) return null;
  const figures = p.figures
    .map(
      (f) =>
        `${f.figure} ${f.halfWidth === null ? 'no interval yet' : `±${pct(f.halfWidth)}`} (asked ${pct(f.target)})`,
    )
    .join(', ');
  const spread = p.roundCv === null ? 'one round' : `round spread ${pct(p.roundCv)}`;
  if (!p.reached) return `did not reach the precision in ${p.rounds} rounds: ${figures}, ${spread}`;
  const saved = precisionSaved(level);
  const tail = saved ? `; ${saved.requests} requests and ${(saved.ms / 1000).toFixed(1)} s saved` : '';
  return `precision reached after ${p.rounds} of ${p.plannedRounds} rounds: ${figures}, ${spread}${tail}`;
}

/** "precision: 480 requests and 16.5 s of measuring saved against the fixed plan"; null without --precision. */
export function precisionSavedText(levels: readonly PrecisionLevel[]): string | null {
  const saved = levels.map(precisionSaved).filter((s) => s !== null);
  if (saved.length === 0) return null;
  const requests = saved.reduce((a, s) => a + s.requests, 0);
  const seconds = saved.reduce((a, s) => a + s.ms, 0) / 1000;
  return `precision: ${requests} requests and ${seconds.toFixed(1)} s of measuring saved against the fixed plan`;
}
