import { METRICS } from '../../shared/metrics.js';
import { requestE2eMs, requestTtftMs } from '../../shared/request-record.js';
import type { RequestRecord } from '../../shared/request-record.js';
import type { LevelResult, RunRecord } from '../../shared/run-record.js';
import type { Exporter } from './exporter.js';
import { requestsByLevel } from './load-run-folder.js';
import type { RunFolder } from './load-run-folder.js';

// Field set of `vllm bench serve --save-result --save-detailed` as written by vllm/benchmarks/serve.py at commit
// 009e6d4a1cd6ba3fb2a9fc00f4ec06f5297232a1 (vLLM main, late 2026): lists in seconds, summaries in ms.

function round(v: number, digits = 6): number {
  return Number(v.toFixed(digits));
}

/** vLLM's `date` field: local time as %Y%m%d-%H%M%S. */
function vllmDate(iso: string): string {
  const d = new Date(iso);
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

/** The registry's figures vLLM writes, under vLLM's keys (throughputs, and mean/median/std/pP of each latency). */
function figureKeys(level: LevelResult): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (const m of METRICS) if (m.views.vllm && m.vllmKey) out[m.vllmKey] = m.level(level);
  return out;
}

/** A per-request latency in seconds as vLLM lists it: 0 for a failed request. */
const seconds = (r: RequestRecord, ms: number | null): number => (r.ok && ms !== null ? round(ms / 1000) : 0);

/** Measured requests of one level, in send order (warm-up and user-cancelled ones left out, as vLLM never sends them). */
function measured(requests: readonly RequestRecord[]): RequestRecord[] {
  return requests.filter((r) => !r.warmup && r.errorKind !== 'cancelled').sort((a, b) => a.sendMs - b.sendMs);
}

/** Gaps between token-bearing chunks of one request, in seconds (vLLM's per-request `itls`). */
function itls(r: RequestRecord): number[] {
  const out: number[] = [];
  for (let i = 1; i < r.chunks.length; i++)
    out.push(round(((r.chunks[i]?.[0] ?? 0) - (r.chunks[i - 1]?.[0] ?? 0)) / 1000));
  return out;
}

/** One level as the JSON object vLLM's benchmark writes for one run. */
function vllmLevelResult(record: RunRecord, level: LevelResult, requests: readonly RequestRecord[]): object {
  const model = record.environment.engine.model ?? record.config.model ?? record.config.server.model ?? '';
  const complete = level.rounds.filter((r) => !r.partial);
  const rounds = complete.length > 0 ? complete : level.rounds;
  const durationS = rounds.reduce((a, r) => a + r.windowMs, 0) / 1000;
  const ok = requests.filter((r) => r.ok);
  const backend = record.config.api === 'completions' ? 'openai' : 'openai-chat';
  return {
    date: vllmDate(record.startedAt),
    endpoint_type: backend,
    backend,
    label: record.label,
    model_id: model,
    tokenizer_id: model,
    num_prompts: requests.length,
    request_rate: level.rate ?? 'inf',
    burstiness: 1.0,
    max_concurrency: level.rate !== undefined ? (record.config.maxConcurrency ?? null) : level.concurrency,
    duration: round(durationS),
    completed: level.completed,
    failed: level.failed,
    total_input_tokens: ok.reduce((a, r) => a + (r.nIn ?? r.expectedIn), 0),
    total_output_tokens: ok.reduce((a, r) => a + r.nOut, 0),
    request_goodput:
      level.goodput !== undefined && level.goodput !== null && level.reqPerSec !== null
        ? level.goodput * level.reqPerSec
        : null,
    input_lens: requests.map((r) => r.nIn ?? r.expectedIn),
    output_lens: requests.map((r) => (r.ok ? r.nOut : 0)),
    ttfts: requests.map((r) => seconds(r, requestTtftMs(r))),
    itls: requests.map((r) => (r.ok ? itls(r) : [])),
    latencies: requests.map((r) => seconds(r, requestE2eMs(r))),
    start_times: requests.map((r) => round(r.sendMs / 1000)),
    errors: requests.map((r) => (r.ok ? '' : (r.error ?? r.errorKind ?? 'failed'))),
    ...figureKeys(level),
    // servebench's own conditions, beside vLLM's keys (vLLM's readers ignore unknown keys).
    servebench: {
      run_id: record.id,
      simulated: record.simulated,
      server_config: level.serverConfigIndex,
      server_variant: level.serverVariant ?? null,
      input_len: level.inputLen,
      output_len: level.outputLen,
      rounds: level.rounds.length,
      partial: level.partial ?? false,
      checks_failed: level.checks.filter((c) => c.status === 'fail').map((c) => c.id),
    },
  };
}

/** One JSON object per level, one per line: what `vllm bench serve --append-result` makes of several runs. */
export function vllmJson(folder: RunFolder): string {
  const byLevel = requestsByLevel(folder);
  return folder.record.levels
    .map((level, i) => JSON.stringify(vllmLevelResult(folder.record, level, measured(byLevel[i] ?? []))))
    .join('\n')
    .concat('\n');
}

export const vllmJsonExporter: Exporter = {
  format: 'vllm-json',
  extension: '.vllm.jsonl',
  mediaType: 'application/x-ndjson',
  binary: false,
  description: "per level, the keys of vLLM's `vllm bench serve --save-result` (one JSON object a line)",
  render: async (folder) => vllmJson(folder),
};
