import type { RequestRecord } from './request-record.js';

/** The width (s) of one throughput bin for a run of this span: about 150 bins, never under one second. */
export function rateBinSeconds(spanS: number): number {
  const raw = Math.max(1, spanS / 150);
  const pow = 10 ** Math.floor(Math.log10(raw));
  const nice = [1, 2, 5, 10].find((m) => m * pow >= raw) ?? 10;
  return nice * pow;
}

/**
 * Output tokens per second over the run's clock, from the requests themselves: each measured request's tokens
 * fall in the bin of the chunk that carried them (or, without chunks, of its end). Bins are `binS` wide from 0;
 * memory grows with the bins, never with the requests, so a streamed requests.jsonl can feed it.
 */
export class OutputRate {
  private readonly tokens = new Map<number, number>();
  constructor(readonly binS: number) {}

  /** Adds one request record (warm-up, failed and unfinished requests are left out, as the figures do). */
  add(r: RequestRecord): void {
    if (r.warmup || !r.ok || r.endMs === null) return;
    if (r.chunks.length > 0) for (const [tMs, n] of r.chunks) this.addAt(tMs / 1000, n);
    else this.addAt(r.endMs / 1000, r.nOut);
  }

  private addAt(tS: number, n: number): void {
    if (!Number.isFinite(tS) || !Number.isFinite(n) || n <= 0) return;
    const bin = Math.floor(tS / this.binS);
    this.tokens.set(bin, (this.tokens.get(bin) ?? 0) + n);
  }

  /** [bin middle s, tok/s] in time order; a bin with no token between two that had some reads 0. */
  points(): Array<[number, number]> {
    const bins = [...this.tokens.keys()].sort((a, b) => a - b);
    if (bins.length === 0) return [];
    const out: Array<[number, number]> = [];
    for (let b = bins[0] as number; b <= (bins[bins.length - 1] as number); b++)
      out.push([(b + 0.5) * this.binS, (this.tokens.get(b) ?? 0) / this.binS]);
    return out;
  }
}
