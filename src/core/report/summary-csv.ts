import type { LevelResult, RunRecord, Summary } from '../../shared/run-record.js';

const COLUMNS = [
  'server_config',
  'concurrency',
  'rate',
  'input_len',
  'output_len',
  'completed',
  'failed',
  'output_tok_s',
  'total_tok_s',
  'req_s',
  'round_cv',
  'ttft_p50_ms',
  'ttft_p95_ms',
  'ttft_p99_ms',
  'tpot_p50_ms',
  'tpot_p95_ms',
  'itl_p50_ms',
  'itl_p95_ms',
  'e2e_p50_ms',
  'e2e_p95_ms',
  'cost_per_m_output_usd',
  'cost_per_m_output_at_utilization_usd',
  'goodput',
  'checks_failed',
  'checks_warned',
  'simulated',
];

function num(v: number | null | undefined, digits = 3): string {
  return v === null || v === undefined || !Number.isFinite(v) ? '' : String(Number(v.toFixed(digits)));
}

function p(summary: Summary, key: 'p50' | 'p95' | 'p99'): string {
  return num(summary[key]);
}

function csvCell(value: string): string {
  return /[",\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

function row(level: LevelResult, simulated: boolean): string[] {
  return [
    level.serverVariant
      ? Object.entries(level.serverVariant)
          .map(([k, v]) => `${k}=${String(v)}`)
          .join(' ')
      : String(level.serverConfigIndex),
    String(level.concurrency),
    num(level.rate),
    String(level.inputLen),
    String(level.outputLen),
    String(level.completed),
    String(level.failed),
    num(level.outputTokPerSec, 1),
    num(level.totalTokPerSec, 1),
    num(level.reqPerSec),
    num(level.roundCv, 4),
    p(level.ttftMs, 'p50'),
    p(level.ttftMs, 'p95'),
    p(level.ttftMs, 'p99'),
    p(level.tpotMs, 'p50'),
    p(level.tpotMs, 'p95'),
    p(level.itlMs, 'p50'),
    p(level.itlMs, 'p95'),
    p(level.e2eMs, 'p50'),
    p(level.e2eMs, 'p95'),
    num(level.costPerMOutputTokUsd, 4),
    num(level.costPerMOutputTokAtUtilizationUsd, 4),
    num(level.goodput, 4),
    level.checks
      .filter((c) => c.status === 'fail')
      .map((c) => c.id)
      .join(' '),
    level.checks
      .filter((c) => c.status === 'warn')
      .map((c) => c.id)
      .join(' '),
    String(simulated),
  ];
}

/** summary.csv: one row per level, the article's table plus conditions; a spreadsheet opens it as is. */
export function summaryCsv(record: RunRecord): string {
  const lines = [COLUMNS.join(',')];
  for (const level of record.levels) lines.push(row(level, record.simulated).map(csvCell).join(','));
  return lines.join('\n') + '\n';
}
