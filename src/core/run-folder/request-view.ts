import type { RequestChart, RequestPage, TimeWindow } from '../../shared/contract.js';
import { REQUEST_CHART_COLUMNS, REQUESTS_PAGE_MAX } from '../../shared/contract.js';
import type { RequestRecord } from '../../shared/request-record.js';
import { requestLatencyPoint } from '../../shared/request-latency.js';
import { OutputRate, rateBinSeconds } from '../../shared/output-rate.js';
import type { RunRecord } from '../../shared/run-record.js';
import { jsonlNotes } from './jsonl.js';
import { streamRequests } from './read-lines.js';

// A big run opens in the app without its requests crossing the wire: the latency chart is thinned here, while
// requests.jsonl streams by, and full records go out for a zoomed window only, a page at a time.

/** The lowest and highest point of one series in one pixel column. */
interface Column {
  lo: [number, number];
  hi: [number, number];
}

function addTo(columns: Map<number, Column>, key: number, t: number, y: number): void {
  const c = columns.get(key);
  const point: [number, number] = [t, y];
  if (!c) columns.set(key, { lo: point, hi: point });
  else if (y < c.lo[1]) c.lo = point;
  else if (y > c.hi[1]) c.hi = point;
}

function points(columns: Map<number, Column>): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const key of [...columns.keys()].sort((a, b) => a - b)) {
    const { lo, hi } = columns.get(key) as Column;
    const pair = lo[0] <= hi[0] ? [lo, hi] : [hi, lo];
    out.push(pair[0] as [number, number]);
    if (lo !== hi) out.push(pair[1] as [number, number]);
  }
  return out;
}

/** The run's measured span in seconds (its levels' windows), the x range of the whole-run chart. */
export function runSpan(record: RunRecord): TimeWindow {
  const from = Math.min(...record.levels.map((l) => l.startMs)) / 1000;
  const to = Math.max(...record.levels.map((l) => l.endMs)) / 1000;
  return Number.isFinite(from) && Number.isFinite(to) && to > from ? { fromS: from, toS: to } : { fromS: 0, toS: 1 };
}

/** Thins measured requests to pixel columns of a span, each keeping its lowest and highest TTFT and E2E. */
export class LatencyColumns {
  private readonly ttft = new Map<number, Column>();
  private readonly e2e = new Map<number, Column>();
  private readonly width: number;
  /** Measured requests added. */
  requests = 0;

  constructor(
    private readonly span: TimeWindow,
    private readonly columns: number,
    private readonly window?: TimeWindow,
  ) {
    this.width = (span.toS - span.fromS) / columns;
  }

  /** Adds one request; true when it was a measured one inside the window. */
  add(r: RequestRecord): boolean {
    const p = requestLatencyPoint(r);
    const w = this.window;
    if (!p || (w && (p.tS < w.fromS || p.tS > w.toS))) return false;
    this.requests++;
    const column = Math.floor((p.tS - this.span.fromS) / this.width);
    // The window's right edge belongs to its last column; a request outside the span gets a column of its own.
    const key = p.tS === this.span.toS ? this.columns - 1 : column;
    if (p.ttftMs !== null) addTo(this.ttft, key, p.tS, p.ttftMs);
    addTo(this.e2e, key, p.tS, p.e2eMs);
    return true;
  }

  /** [end s, ms] points of TTFT and E2E, in time order. */
  points(): { ttft: Array<[number, number]>; e2e: Array<[number, number]> } {
    return { ttft: points(this.ttft), e2e: points(this.e2e) };
  }
}

/**
 * The latency-over-time chart of a run folder, streamed: each measured request falls in one of `columns` pixel
 * columns of the window (the run's span by default; requests outside it get columns of their own), and each
 * column keeps its lowest and highest TTFT and E2E. Memory grows with the columns, never with the requests.
 */
export async function requestChart(
  dir: string,
  record: RunRecord,
  secrets: readonly string[],
  window?: TimeWindow,
  columns = REQUEST_CHART_COLUMNS,
): Promise<RequestChart> {
  const span = window ?? runSpan(record);
  const thin = new LatencyColumns(span, columns, window);
  const rate = new OutputRate(rateBinSeconds(span.toS - span.fromS));
  const report = await streamRequests(dir, secrets, (r) => {
    if (thin.add(r)) rate.add(r);
  });
  return {
    ...thin.points(),
    outputRate: rate.points(),
    requests: thin.requests,
    columns,
    window: window ?? null,
    notes: jsonlNotes(report),
  };
}

/** True when a request's send..end overlaps the window (one still going is taken to end when it was sent). */
const overlaps = (r: RequestRecord, w: TimeWindow): boolean =>
  r.sendMs / 1000 <= w.toS && (r.endMs ?? r.sendMs) / 1000 >= w.fromS;

/** Full request records of a run folder (or a window of it), streamed; the first REQUESTS_PAGE_MAX are kept. */
export async function requestPage(dir: string, secrets: readonly string[], window?: TimeWindow): Promise<RequestPage> {
  const requests: RequestRecord[] = [];
  let total = 0;
  const report = await streamRequests(dir, secrets, (r) => {
    if (window && !overlaps(r, window)) return;
    total++;
    if (requests.length < REQUESTS_PAGE_MAX) requests.push(r);
  });
  return { requests, total, truncated: total > requests.length, window: window ?? null, notes: jsonlNotes(report) };
}
