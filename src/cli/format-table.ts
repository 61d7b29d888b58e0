import { fromServer } from '../core/metrics/error-summary.js';
import type { LevelResult, RunRecord } from '../shared/run-record.js';

function ms(v: number | null): string {
  if (v === null || !Number.isFinite(v)) return '—';
  return v >= 1000 ? `${(v / 1000).toFixed(2)}s` : `${v.toFixed(v >= 100 ? 0 : 1)}`;
}

function checksCell(level: LevelResult): string {
  const failed = level.checks.filter((c) => c.status === 'fail').map((c) => c.id);
  const warned = level.checks.filter((c) => c.status === 'warn').map((c) => c.id);
  if (failed.length === 0 && warned.length === 0) return 'ok';
  return [failed.length ? `FAIL ${failed.join(',')}` : '', warned.length ? `warn ${warned.join(',')}` : '']
    .filter(Boolean)
    .join('; ');
}

function pad(cells: string[][]): string {
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return cells
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padStart(widths[i] ?? 0))).join('  '))
    .join('\n');
}

/** The article's table: one row per level, latencies in ms unless marked s. */
export function formatLevelTable(record: RunRecord): string {
  const variants = new Set(record.levels.map((l) => l.serverConfigIndex)).size > 1;
  const priced = record.levels.some((l) => l.costPerMOutputTokUsd !== undefined);
  const atUtil = record.levels.some((l) => l.costPerMOutputTokAtUtilizationUsd !== undefined);
  const slo = record.levels.some((l) => l.goodput !== undefined);
  const cost = (l: LevelResult): string => {
    if (l.costPerMOutputTokUsd === undefined) return '—';
    const peak = l.costPerMOutputTokUsd.toFixed(3);
    return l.costPerMOutputTokAtUtilizationUsd !== undefined
      ? `${peak} / ${l.costPerMOutputTokAtUtilizationUsd.toFixed(3)}`
      : peak;
  };
  const lengths = new Set(record.levels.map((l) => `${l.inputLen}/${l.outputLen}`)).size > 1;
  const head = [
    ...(variants ? ['server'] : []),
    ...(lengths ? ['in/out'] : []),
    record.levels.some((l) => l.rate !== undefined) ? 'rate' : 'conc',
    'out tok/s',
    'TTFT p50',
    'p95',
    'TPOT p50',
    'p95',
    'E2E p50',
    'p95',
    ...(priced ? [atUtil ? '$/1M out (peak/at util.)' : '$/1M out'] : []),
    ...(slo ? ['goodput'] : []),
    'checks',
  ];
  const rows = record.levels.map((l) => [
    ...(variants
      ? [
          l.serverVariant
            ? Object.entries(l.serverVariant)
                .map(([k, v]) => `${k.split('.').pop()}=${String(v)}`)
                .join(',')
            : String(l.serverConfigIndex),
        ]
      : []),
    ...(lengths ? [`${l.inputLen}/${l.outputLen}`] : []),
    l.rate !== undefined ? `${l.rate}/s` : String(l.concurrency),
    (l.outputTokPerSec === null ? '—' : l.outputTokPerSec.toFixed(1)) + (l.partial ? '*' : ''),
    ms(l.ttftMs.p50),
    ms(l.ttftMs.p95),
    ms(l.tpotMs.p50),
    ms(l.tpotMs.p95),
    ms(l.e2eMs.p50),
    ms(l.e2eMs.p95),
    ...(priced ? [cost(l)] : []),
    ...(slo ? [l.goodput !== undefined && l.goodput !== null ? `${(l.goodput * 100).toFixed(0)} %` : '—'] : []),
    checksCell(l),
  ]);
  return pad([head, ...rows]);
}

/** How a level is named in the last lines: its load, and its lengths or server setup when those vary. */
function levelName(record: RunRecord, l: LevelResult): string {
  const load = l.rate !== undefined ? `${l.rate} req/s` : `c=${l.concurrency}`;
  const many = new Set(record.levels.map((x) => `${x.serverConfigIndex}|${x.inputLen}|${x.outputLen}`)).size > 1;
  return many
    ? `${load} ${l.inputLen}/${l.outputLen}${l.serverConfigIndex > 0 ? ` #${l.serverConfigIndex}` : ''}`
    : load;
}

/**
 * Run-level checks that did not pass, one per line; then each level cut short (and why), and the server's commonest
 * error message per level that had failures, quoted (the run-level errors check quotes only its worst level).
 */
export function formatProblems(record: RunRecord): string[] {
  const lines = record.checks
    .filter((c) => c.status !== 'pass')
    .map((c) => `${c.status === 'fail' ? 'FAIL' : 'warn'} ${c.id}: ${c.detail}`);
  for (const l of record.levels) {
    const name = levelName(record, l);
    if (l.partial) {
      const why = l.cutShort ? `: ${l.cutShort}` : '';
      lines.push(`${name} cut short${why}${l.outputTokPerSec === null ? ' (no throughput: no round completed)' : ''}`);
    }
    if (l.topError && l.failed > 0) {
      const who = fromServer(l.topError) ? 'server said' : 'error';
      lines.push(`${name}: ${l.failed} failed; ${who} (${l.topError.count}×): "${l.topError.message}"`);
    }
  }
  return lines;
}
