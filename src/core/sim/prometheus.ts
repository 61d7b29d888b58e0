import type { EngineStats } from './scheduler.js';

/** vLLM's TTFT histogram buckets (seconds). */
const TTFT_BUCKETS = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0,
  640.0, 2560.0,
];

/** vLLM's request-latency buckets (seconds): e2e, queue, prefill and decode time histograms. */
export const REQUEST_LATENCY_BUCKETS = [
  0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0,
  7680.0,
];

/** A cumulative Prometheus histogram. */
export class Histogram {
  readonly counts: number[];
  count = 0;
  sum = 0;

  constructor(readonly buckets: readonly number[] = TTFT_BUCKETS) {
    this.counts = new Array<number>(buckets.length).fill(0);
  }

  /** Records one observation (seconds). */
  observe(v: number): void {
    this.count++;
    this.sum += v;
    for (let i = 0; i < this.buckets.length; i++) if (v <= this.buckets[i]!) this.counts[i]!++;
  }
}

/** What /metrics reports, read from the engine at scrape time. */
export interface MetricsSnapshot {
  model: string;
  running: number;
  waiting: number;
  kvUsage: number;
  kvUsedTokens: number;
  stats: EngineStats;
  ttft: Histogram;
  /** Per finished request: its first to its last generated token, as the engine made them (vLLM's decode time). */
  decodeTime: Histogram;
  /** Per finished request: received to first admitted (vLLM's queue time), and admitted to first token (prefill). */
  queueTime: Histogram;
  prefillTime: Histogram;
  /** Generated tokens/s over the last GPU tick (SGLang reports this). */
  genThroughput: number;
}

// Prometheus' Python client prints floats: 3 -> 3.0.
function num(n: number): string {
  return Number.isInteger(n) ? `${n}.0` : String(n);
}

function esc(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function metric(lines: string[], name: string, type: string, help: string, labels: string, value: number): void {
  lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name}{${labels}} ${num(value)}`);
}

function histogram(lines: string[], name: string, help: string, labels: string, h: Histogram): void {
  lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} histogram`);
  lines.push(`${name}_sum{${labels}} ${num(h.sum)}`);
  h.buckets.forEach((le, i) => lines.push(`${name}_bucket{${labels},le="${num(le)}"} ${num(h.counts[i]!)}`));
  lines.push(`${name}_bucket{${labels},le="+Inf"} ${num(h.count)}`, `${name}_count{${labels}} ${num(h.count)}`);
}

/** /metrics in vLLM's names (V1 engine: engine and model_name labels). */
export function vllmMetrics(m: MetricsSnapshot): string {
  const l = `engine="0",model_name="${esc(m.model)}"`;
  const lines: string[] = [];
  metric(lines, 'vllm:num_requests_running', 'gauge', 'Number of requests in model execution batches.', l, m.running);
  metric(lines, 'vllm:num_requests_waiting', 'gauge', 'Number of requests waiting to be processed.', l, m.waiting);
  metric(lines, 'vllm:kv_cache_usage_perc', 'gauge', 'KV-cache usage. 1 means 100 percent usage.', l, m.kvUsage);
  metric(
    lines,
    'vllm:num_preemptions_total',
    'counter',
    'Cumulative number of preemption from the engine.',
    l,
    m.stats.preemptions,
  );
  metric(
    lines,
    'vllm:prefix_cache_queries_total',
    'counter',
    'Prefix cache queries, in terms of number of queried tokens.',
    l,
    m.stats.prefixQueryTokens,
  );
  metric(
    lines,
    'vllm:prefix_cache_hits_total',
    'counter',
    'Prefix cache hits, in terms of number of cached tokens.',
    l,
    m.stats.prefixHitTokens,
  );
  metric(lines, 'vllm:prompt_tokens_total', 'counter', 'Number of prefill tokens processed.', l, m.stats.promptTokens);
  metric(
    lines,
    'vllm:generation_tokens_total',
    'counter',
    'Number of generation tokens processed.',
    l,
    m.stats.generationTokens,
  );
  lines.push(
    '# HELP vllm:request_success_total Count of successfully processed requests.',
    '# TYPE vllm:request_success_total counter',
    `vllm:request_success_total{${l}} ${num(m.stats.finished)}`,
  );
  histogram(lines, 'vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', l, m.ttft);
  histogram(
    lines,
    'vllm:request_decode_time_seconds',
    'Histogram of time spent in DECODE phase for request.',
    l,
    m.decodeTime,
  );
  histogram(
    lines,
    'vllm:request_queue_time_seconds',
    'Histogram of time spent in WAITING phase for request.',
    l,
    m.queueTime,
  );
  histogram(
    lines,
    'vllm:request_prefill_time_seconds',
    'Histogram of time spent in PREFILL phase for request.',
    l,
    m.prefillTime,
  );
  return lines.join('\n') + '\n';
}

/** /metrics in SGLang's names (model_name label). */
export function sglangMetrics(m: MetricsSnapshot): string {
  const l = `model_name="${esc(m.model)}"`;
  const lines: string[] = [];
  const hitRate = m.stats.prefixQueryTokens > 0 ? m.stats.prefixHitTokens / m.stats.prefixQueryTokens : 0;
  metric(lines, 'sglang:num_running_reqs', 'gauge', 'The number of running requests.', l, m.running);
  metric(lines, 'sglang:num_queue_reqs', 'gauge', 'The number of requests in the waiting queue.', l, m.waiting);
  metric(lines, 'sglang:num_used_tokens', 'gauge', 'The number of used tokens.', l, m.kvUsedTokens);
  metric(lines, 'sglang:token_usage', 'gauge', 'The token usage.', l, Math.round(m.kvUsage * 1e4) / 1e4);
  metric(lines, 'sglang:cache_hit_rate', 'gauge', 'The prefix cache hit rate.', l, Math.round(hitRate * 1e4) / 1e4);
  metric(
    lines,
    'sglang:gen_throughput',
    'gauge',
    'The generation throughput (token/s).',
    l,
    Math.round(m.genThroughput * 100) / 100,
  );
  metric(
    lines,
    'sglang:prompt_tokens_total',
    'counter',
    'Number of prefill tokens processed.',
    l,
    m.stats.promptTokens,
  );
  metric(
    lines,
    'sglang:generation_tokens_total',
    'counter',
    'Number of generation tokens processed.',
    l,
    m.stats.generationTokens,
  );
  metric(lines, 'sglang:num_requests_total', 'counter', 'Number of requests processed.', l, m.stats.finished);
  histogram(lines, 'sglang:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', l, m.ttft);
  histogram(lines, 'sglang:queue_time_seconds', 'Histogram of queueing time in seconds.', l, m.queueTime);
  return lines.join('\n') + '\n';
}
