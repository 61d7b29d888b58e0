import { percentile } from './percentile.js';
import { requestTpotMs, requestTtftMs } from './request-record.js';
import type { RequestRecord } from './request-record.js';
import type { TimelineSpec } from './timeline-spec.js';

/** p50, p95 and p99 of one latency over a window's requests; null with none. */
interface WindowPercentiles {
  p50: number;
  p95: number;
  p99: number;
}

/** The lowest and highest value of one telemetry series inside the window. */
interface WindowRange {
  panel: string;
  label: string;
  unit: string;
  min: number;
  max: number;
}

/** The figures of a stretch of a run chosen on its timeline. */
export interface WindowFigures {
  fromS: number;
  toS: number;
  /** Measured requests that ended in the window, and how many of them failed. */
  requests: number;
  failed: number;
  /** The page held only the first `requests` of `total` (REQUESTS_PAGE_MAX): the figures are over those. */
  total: number;
  truncated: boolean;
  ttftMs: WindowPercentiles | null;
  tpotMs: WindowPercentiles | null;
  /** Output tokens that arrived in the window, per second of it. */
  outputTokPerSec: number | null;
  telemetry: WindowRange[];
}

function percentiles(values: number[]): WindowPercentiles | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99) };
}

/** Output tokens whose chunk arrived in [from, to] s (a request without chunks counts at its end). */
function tokensIn(requests: readonly RequestRecord[], fromS: number, toS: number): number {
  let n = 0;
  const inside = (ms: number): boolean => ms / 1000 >= fromS && ms / 1000 <= toS;
  for (const r of requests) {
    if (r.warmup || !r.ok || r.endMs === null) continue;
    if (r.chunks.length > 0) for (const [t, k] of r.chunks) n += inside(t) ? k : 0;
    else if (inside(r.endMs)) n += r.nOut;
  }
  return n;
}

/** Each telemetry series' min and max inside the window, read off the timeline's own panels. */
function telemetryRanges(spec: TimelineSpec, fromS: number, toS: number): WindowRange[] {
  const out: WindowRange[] = [];
  for (const panel of spec.panels) {
    if (panel.id === 'ttft' || panel.id === 'e2e') continue;
    panel.series.forEach((s, i) => {
      let min = Infinity;
      let max = -Infinity;
      panel.x.forEach((x, j) => {
        const v = panel.ys[i]?.[j];
        if (x < fromS || x > toS || v === null || v === undefined) return;
        min = Math.min(min, v);
        max = Math.max(max, v);
      });
      if (min <= max) out.push({ panel: panel.title, label: s.label, unit: s.unit, min, max });
    });
  }
  return out;
}

/**
 * The figures of the window [fromS, toS] of a run: its measured requests (those that ended in it), TTFT and TPOT
 * percentiles, output throughput, and every telemetry series' range. `page` is the window's request records.
 */
export function windowFigures(
  page: { requests: readonly RequestRecord[]; total: number; truncated: boolean },
  spec: TimelineSpec,
  fromS: number,
  toS: number,
): WindowFigures {
  const ended = page.requests.filter(
    (r) => !r.warmup && r.endMs !== null && r.endMs / 1000 >= fromS && r.endMs / 1000 <= toS,
  );
  const ok = ended.filter((r) => r.ok);
  const values = (f: (r: RequestRecord) => number | null): number[] =>
    ok.map(f).filter((v): v is number => v !== null && Number.isFinite(v));
  const span = toS - fromS;
  return {
    fromS,
    toS,
    requests: ended.length,
    failed: ended.length - ok.length,
    total: page.total,
    truncated: page.truncated,
    ttftMs: percentiles(values(requestTtftMs)),
    tpotMs: percentiles(values(requestTpotMs)),
    outputTokPerSec: span > 0 ? tokensIn(page.requests, fromS, toS) / span : null,
    telemetry: telemetryRanges(spec, fromS, toS),
  };
}
