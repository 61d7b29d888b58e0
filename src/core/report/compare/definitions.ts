import { FIGURES } from './types.js';
import type { CompareQuantity, FigureKey, FigureSource } from './types.js';

// How each tool that compare reads defines the figures compare puts side by side, read from the tools' own source:
// AIPerf aiperf/metrics/types/*.py and aiperf/parsers/openai_parsers.py (ai-dynamo/aiperf db4f6397d11e);
// guidellm src/guidellm/schemas/request_stats.py, schemas/statistics.py, benchmark/schemas/metrics.py and
// backends/openai/http.py (vllm-project/guidellm ee7a77457ba6); inference-perf inference_perf/reportgen/base.py
// and client/modelserver/openai_client.py (kubernetes-sigs/inference-perf 7de5ef2ed6f7); llm-d-benchmark's
// Benchmark Report importers llmdbenchmark/analysis/benchmark_report/native_to_br0_2.py (llm-d/llm-d-benchmark
// 8bc9f1ddd873). servebench's own definitions are docs/report.md's; every note below says where a tool's differs.

/** The four quantities compare shows; p50 and p95 of the latencies are two figures of one definition. */
export type Metric = 'throughput' | 'ttft' | 'tpot' | 'e2e';

/** A tool's definition of one metric: how it matches servebench's, the tool's own field name, and why. */
export interface MetricSource {
  match: FigureSource['match'];
  field: string;
  note: string;
}

/** A tool's definitions of the metrics it writes. */
export type MetricSources = Partial<Record<Metric, MetricSource>>;

/** A latency's compared figures and the suffix naming each (" p50"), from the registry. */
const percentilesOf = (q: CompareQuantity): Array<[FigureKey, string]> =>
  FIGURES.filter((f) => f.quantity === q).map((f) => [f.key, ` p${f.percentile}`]);

const FIGURES_OF: Record<Metric, Array<[FigureKey, string]>> = {
  throughput: [['throughput', '']],
  ttft: percentilesOf('ttft'),
  tpot: percentilesOf('tpot'),
  e2e: percentilesOf('e2e'),
};

/** Per figure, a tool's definitions named "<tool> <field> p50". */
export function figureSources(tool: string, sources: MetricSources): Partial<Record<FigureKey, FigureSource>> {
  const out: Partial<Record<FigureKey, FigureSource>> = {};
  for (const [metric, source] of Object.entries(sources) as Array<[Metric, MetricSource]>)
    for (const [key, suffix] of FIGURES_OF[metric])
      out[key] = { match: source.match, name: `${tool} ${source.field}${suffix}`, note: source.note };
  return out;
}

/** The metric a figure belongs to. */
export function metricOf(key: FigureKey): Metric {
  return (Object.keys(FIGURES_OF) as Metric[]).find((m) => FIGURES_OF[m].some(([k]) => k === key)) ?? 'throughput';
}

const LINEAR = 'percentiles by linear interpolation (NumPy), as servebench';

/** AIPerf's profile_export_aiperf.json / .csv (display units: ms, tokens/sec). */
export const AIPERF_SOURCES: MetricSources = {
  ttft: {
    match: 'same',
    field: 'time_to_first_token',
    note: `first response carrying text (content or reasoning) − request start, per request; ${LINEAR}`,
  },
  tpot: {
    match: 'differs',
    field: 'inter_token_latency',
    note:
      "AIPerf's ITL is servebench's TPOT formula, (request_latency − TTFT) / (output_sequence_length − 1), but its " +
      'request_latency ends at the last response with text rather than the end of the stream, and ' +
      "output_sequence_length is AIPerf's own tokenization of the text (reasoning included), not the server's count",
  },
  e2e: {
    match: 'differs',
    field: 'request_latency',
    note: "last response carrying text − request start: it ends before the stream does (servebench's E2E ends with it)",
  },
  throughput: {
    match: 'differs',
    field: 'output_token_throughput',
    note:
      "the sum of AIPerf's own token counts of the output text / benchmark_duration (first request to last " +
      "response); servebench counts the server's tokens",
  },
};

const GUIDELLM_PER_REQUEST =
  "computed from guidellm's per-request timings (requests.successful: request_start, first_token_iteration, " +
  'request_end; output_tokens from the server usage where it gave one)';

/** guidellm's benchmarks.json with every request listed: servebench's figures computed from them. */
export const GUIDELLM_REQUEST_SOURCES: MetricSources = {
  ttft: {
    match: 'converted',
    field: 'time_to_first_token_ms',
    note: `first streamed line carrying tokens − request_start, ${GUIDELLM_PER_REQUEST}; ${LINEAR}`,
  },
  tpot: {
    match: 'converted',
    field: '(request_latency − time_to_first_token) / (output_tokens − 1)',
    note:
      `servebench's TPOT ${GUIDELLM_PER_REQUEST}; guidellm's own time_per_output_token_ms counts the first token ` +
      '(request start to last token / output_tokens) and its inter_token_latency_ms ends at the last token, ' +
      'weighted by tokens: neither is used',
  },
  e2e: {
    match: 'converted',
    field: 'request_latency',
    note: `request_end (after the stream's last line) − request_start, ${GUIDELLM_PER_REQUEST}; ${LINEAR}`,
  },
  throughput: {
    match: 'converted',
    field: 'output_tokens / window',
    note: `output tokens of the successful requests / first request_start .. last request_end, ${GUIDELLM_PER_REQUEST}`,
  },
};

const GUIDELLM_PERCENTILE =
  'guidellm takes percentiles from the inverse CDF (the smallest value whose share reaches p), without interpolation';

/** guidellm's summaries (benchmarks[].metrics), where the requests are not all listed. */
export const GUIDELLM_SUMMARY_SOURCES: MetricSources = {
  ttft: {
    match: 'differs',
    field: 'time_to_first_token_ms',
    note: `first streamed line carrying tokens − request_start, as servebench per request, but ${GUIDELLM_PERCENTILE}`,
  },
  tpot: {
    match: 'differs',
    field: 'inter_token_latency_ms',
    note:
      "(last token − first token) / (output_tokens − 1), the nearest of guidellm's figures to servebench's TPOT: it " +
      'ends at the last token, not the end of the stream, and its percentiles weight each request by its tokens; ' +
      "guidellm's time_per_output_token_ms counts the first token ((last token − request start) / output_tokens); " +
      GUIDELLM_PERCENTILE,
  },
  e2e: {
    match: 'differs',
    field: 'request_latency',
    note: `request_end − request_start, as servebench per request, but ${GUIDELLM_PERCENTILE}`,
  },
  throughput: {
    match: 'differs',
    field: 'output_tokens_per_second mean',
    note: 'the mean of a rate distribution built from token timings, not output tokens / the first-send..last-end window',
  },
};

const IP_TTFT_NOTE =
  'first chunk carrying answer text (delta.content or text) − request start, NumPy linear percentiles, seconds; ' +
  'reasoning text is not counted, so on a reasoning model it is the time to the first answer token';

/** inference-perf's lifecycle reports (summary, stage_N). */
export const INFERENCE_PERF_SOURCES: MetricSources = {
  ttft: { match: 'same', field: 'time_to_first_token', note: IP_TTFT_NOTE },
  tpot: {
    match: 'differs',
    field: 'time_per_output_token',
    note:
      '(last token chunk − first token chunk) / (output tokens − 1): it ends at the last text chunk, not the end of ' +
      "the stream, and counts the client's re-tokenization of the text unless use_server_output_tokens was set",
  },
  e2e: {
    match: 'same',
    field: 'request_latency',
    note: 'request end (the response read whole) − request start, NumPy linear percentiles, seconds',
  },
  throughput: {
    match: 'converted',
    field: 'output_tokens.total / benchmark_time_seconds',
    note:
      "the server's usage counts of the successful requests (the client's count where a server sent none) / first " +
      'start .. last end over all requests, as servebench',
  },
};

/** inference-perf reports older than its output_tokens section: only the rate it computed itself. */
export const INFERENCE_PERF_RATE_SOURCE: MetricSource = {
  match: 'differs',
  field: 'output_tokens_per_sec',
  note: "output tokens / first start .. last end, counting the client's re-tokenization unless use_server_output_tokens",
};

/** vLLM's benchmark, as llm-d-benchmark's vllm-benchmark importer maps it (the same fields compare reads from it). */
export const VLLM_SOURCES: MetricSources = {
  ttft: { match: 'same', field: 'ttft', note: `first token − send; ${LINEAR}` },
  tpot: { match: 'same', field: 'tpot', note: '(latency − ttft) / (output_len − 1), output_len from usage' },
  e2e: { match: 'same', field: 'e2el', note: 'end of the stream − send' },
  throughput: { match: 'same', field: 'output_throughput', note: 'output tokens / benchmark duration' },
};

/** A Benchmark Report servebench wrote (report --format llmd-benchmark-report). */
export const SERVEBENCH_SOURCES: MetricSources = {
  ttft: { match: 'same', field: 'time_to_first_token', note: "servebench's own TTFT" },
  tpot: { match: 'same', field: 'time_per_output_token', note: "servebench's own TPOT" },
  e2e: { match: 'same', field: 'request_latency', note: "servebench's own E2E" },
  throughput: {
    match: 'same',
    field: 'output_token_rate',
    note: "servebench's output tokens over the summed windows of the level's complete rounds",
  },
};

/** guidellm's own TPOT, as llm-d-benchmark's guidellm importer puts it in a Benchmark Report's time_per_output_token. */
export const GUIDELLM_TPOT_SOURCE: MetricSource = {
  match: 'differs',
  field: 'time_per_output_token_ms',
  note:
    "guidellm's TPOT, (last token − request start) / output_tokens, counts the first token (servebench's TPOT does " +
    `not), its percentiles weight each request by its tokens, and ${GUIDELLM_PERCENTILE}`,
};

/** A Benchmark Report from a tool servebench does not know: every figure is that tool's. */
export function unknownToolSources(tool: string): MetricSources {
  const note = `written by ${tool}, whose definitions compare does not know: never compared with servebench's`;
  return {
    ttft: { match: 'differs', field: 'time_to_first_token', note },
    tpot: { match: 'differs', field: 'time_per_output_token', note },
    e2e: { match: 'differs', field: 'request_latency', note },
    throughput: { match: 'differs', field: 'output_token_rate', note },
  };
}
