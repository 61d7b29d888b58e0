import { STATUS_SEVERITY } from '../../shared/check-status.js';
import { isPooling, scoresPairs } from '../../shared/endpoint-kinds.js';
import type { Check, RunRecord } from '../../shared/run-record.js';
import { fmtNumber, fmtValue } from '../../shared/format.js';
import { loadText } from '../../shared/level-load.js';
import { countOf } from '../../shared/plural.js';
import type { Fact } from '../../shared/environment-facts.js';

// The environment and the server command are shared with the app's results page (one reckoning).
export { environmentFacts, serverCommandText, type Fact } from '../../shared/environment-facts.js';

/** The run's verdict from its run-level checks. */
export interface Verdict {
  status: 'pass' | 'warn' | 'fail';
  text: string;
}

function unique(values: Array<string | undefined | null>): string[] {
  return [...new Set(values.filter((v): v is string => typeof v === 'string' && v.length > 0))];
}

/** pass / warn / fail over the run's checks, with the ids that did not pass. */
export function verdict(record: RunRecord): Verdict {
  const failed = record.checks.filter((c) => c.status === 'fail').map((c) => c.id);
  const warned = record.checks.filter((c) => c.status === 'warn').map((c) => c.id);
  if (failed.length > 0)
    return { status: 'fail', text: `FAIL: ${failed.join(', ')}${warned.length ? `; warn: ${warned.join(', ')}` : ''}` };
  if (warned.length > 0) return { status: 'warn', text: `passed with warnings: ${warned.join(', ')}` };
  // No level measured (stopped or failed before the first): the server's check alone passes no measurement.
  if (record.levels.length === 0)
    return {
      status: record.status === 'failed' ? 'fail' : 'warn',
      text: `no verdict: nothing was measured (${statusText(record)})`,
    };
  return { status: 'pass', text: `all ${record.checks.length} checks passed` };
}

/** "completed", or the status with its reason (cancelled, failed, interrupted). */
function statusText(record: RunRecord): string {
  return record.status === 'completed' ? 'completed' : `${record.status}${record.error ? `: ${record.error}` : ''}`;
}

/** The diffusion parameters of the run (and of each server configuration in a sweep), or undefined. */
export function diffusionText(record: RunRecord): string | undefined {
  const base = record.config.server.diffusion;
  const variants = record.levels.map((l) => l.serverVariant).filter((v) => v !== undefined);
  const swept = unique(
    variants.flatMap((v) =>
      Object.entries(v)
        .filter(([k]) => /diffusion|threshold|block/i.test(k))
        .map(([k, val]) => `${k.split('.').pop()}=${String(val)}`),
    ),
  );
  if (!base && swept.length === 0) return undefined;
  const parts = base ? [`${base.algorithm}, block_size ${base.blockSize}, threshold ${base.threshold}`] : [];
  if (swept.length) parts.push(`swept: ${swept.join(', ')}`);
  return parts.join('; ');
}

/** A pooling run's lengths: its endpoint, inputs per request and tokens per input (no output length: none is made). */
function poolingLengths(record: RunRecord): string | null {
  const api = record.config.api;
  if (!isPooling(api)) return null;
  const unit = scoresPairs(api) ? 'documents' : 'inputs';
  return `${api}: ${record.config.batchSize ?? 1} ${unit} of ${record.config.inputLen.join(',')} tokens per request`;
}

/** The headline: what was measured, on what, under which conditions, and the verdict. */
export function headlineFacts(record: RunRecord): Fact[] {
  const e = record.environment.engine;
  const gpus = record.environment.gpus ?? [];
  const gpuNames = unique(gpus.map((g) => g.name));
  const server = record.config.server;
  const quant = unique([
    server.quantization,
    ...record.levels.map((l) => l.serverVariant?.quantization as string | undefined),
  ]);
  const levels = record.levels;
  const lengths = unique(levels.map((l) => `${l.inputLen} in / ${l.outputLen} out`));
  const cfgLengths = `${record.config.inputLen.join(',')} in / ${record.config.outputLen.join(',')} out`;
  const load = record.config.rate
    ? `open loop: ${record.config.rate.join(', ')} req/s${record.config.maxConcurrency ? `, at most ${record.config.maxConcurrency} in flight` : ''}`
    : `closed loop: concurrency ${record.config.concurrency.join(', ')}`;
  const facts: Fact[] = [
    { label: 'Model', value: e.model ?? record.config.model ?? server.model ?? 'unknown' },
    { label: 'Engine', value: `${e.kind}${e.version ? ` ${e.version}` : ''}${record.simulated ? ' (SIMULATED)' : ''}` },
    {
      label: 'GPU',
      value: gpuNames.length
        ? `${gpus.length} × ${gpuNames.join(', ')}${gpus[0]?.driver ? ` (driver ${gpus[0].driver})` : ''}`
        : 'not reported',
    },
    { label: 'Quantization', value: quant.length ? quant.join(', ') : (server.dtype ?? 'none (model default)') },
    { label: 'Lengths', value: poolingLengths(record) ?? (lengths.length ? lengths.join('; ') : cfgLengths) },
    { label: 'Load', value: `${load}; ${countOf(record.config.rounds, 'round')} per level` },
  ];
  const diffusion = diffusionText(record);
  if (diffusion) facts.push({ label: 'Diffusion', value: diffusion });
  facts.push({ label: 'Status', value: statusText(record) });
  facts.push({ label: 'Verdict', value: verdict(record).text });
  return facts;
}

/** The cost section in sentences: the price, utilization, and the cheapest level. */
export function costLines(record: RunRecord): string[] {
  const price = record.config.gpuPricePerHour;
  if (price === undefined) {
    return [
      'No GPU price was given (--gpu-price-per-hour): no cost per token. Cost per 1M output tokens = price per hour / (output tok/s × 3600) × 1e6.',
    ];
  }
  const lines = [
    `GPU price $${price}/h${record.config.utilization ? `, average utilization ${Math.round(record.config.utilization * 100)} % (the peak cost is divided by it)` : ''}.`,
    'Cost per 1M output tokens = price per hour / (output tok/s × 3600) × 1e6, at the measured throughput of each level.',
  ];
  const priced = record.levels.filter((l) => l.costPerMOutputTokUsd !== undefined);
  const best = priced.reduce<(typeof priced)[number] | undefined>(
    (a, l) => (!a || (l.costPerMOutputTokUsd ?? Infinity) < (a.costPerMOutputTokUsd ?? Infinity) ? l : a),
    undefined,
  );
  if (best && best.outputTokPerSec !== null) {
    const at = best.rate !== undefined || best.burst !== undefined ? loadText(best) : `concurrency ${best.concurrency}`;
    lines.push(
      `Cheapest level: ${at} at ${fmtNumber(best.outputTokPerSec)} output tok/s: ${fmtValue(best.costPerMOutputTokUsd, '$', 3)} per 1M output tokens at full use` +
        (best.costPerMOutputTokAtUtilizationUsd !== undefined
          ? `, ${fmtValue(best.costPerMOutputTokAtUtilizationUsd, '$', 3)} at the given utilization.`
          : '.'),
    );
  }
  return lines;
}

/** Checks that did not pass first, then the rest; each with its reason. */
export function sortedChecks(checks: readonly Check[]): Check[] {
  return [...checks].sort((a, b) => STATUS_SEVERITY[b.status] - STATUS_SEVERITY[a.status]);
}
