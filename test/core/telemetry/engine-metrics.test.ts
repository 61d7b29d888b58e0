import { describe, expect, it } from 'vitest';
import { createMonoClock } from '../../../src/core/clock.js';
import { engineSampleFromMetrics, startEngineScraper } from '../../../src/core/telemetry/engine-metrics.js';
import type { HttpGetText } from '../../../src/core/telemetry/http-get.js';
import { parsePrometheusText } from '../../../src/core/telemetry/prometheus-parser.js';
import type { EngineSample } from '../../../src/shared/telemetry.js';
import { countdown } from './helpers.js';

const VLLM_V1 = `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 12.0
vllm:num_requests_running{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 4.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 3.0
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.42
vllm:kv_cache_usage_perc{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.87
# TYPE vllm:num_preemptions counter
vllm:num_preemptions_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 5.0
vllm:num_preemptions_created{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 1.7156e+09
# TYPE vllm:prefix_cache_hits counter
vllm:prefix_cache_hits_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 2048.0
# TYPE vllm:generation_tokens counter
vllm:generation_tokens_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 123456.0
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="meta-llama/Llama-3.1-8B-Instruct"} 10.0
`;

const VLLM_OLD = `vllm:num_requests_running{model_name="m"} 2.0
vllm:num_requests_waiting{model_name="m"} 0.0
vllm:gpu_cache_usage_perc{model_name="m"} 0.25
vllm:num_preemptions_total{model_name="m"} 0.0
vllm:gpu_prefix_cache_hits_total{model_name="m"} 7.0
`;

const SGLANG = `# HELP sglang:num_running_reqs The number of running requests.
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{model_name="Qwen/Qwen3-8B",tp_rank="0"} 8.0
# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs{model_name="Qwen/Qwen3-8B",tp_rank="0"} 2.0
# TYPE sglang:token_usage gauge
sglang:token_usage{model_name="Qwen/Qwen3-8B",tp_rank="0"} 0.28
# TYPE sglang:cache_hit_rate gauge
sglang:cache_hit_rate{model_name="Qwen/Qwen3-8B",tp_rank="0"} 0.0075
# TYPE sglang:num_retracted_requests counter
sglang:num_retracted_requests_total{model_name="Qwen/Qwen3-8B",tp_rank="0"} 3.0
# TYPE sglang:realtime_tokens counter
sglang:realtime_tokens_total{mode="prefill_compute",model_name="Qwen/Qwen3-8B"} 900.0
sglang:realtime_tokens_total{mode="prefill_cache",model_name="Qwen/Qwen3-8B"} 100.0
# TYPE sglang:generation_tokens counter
sglang:generation_tokens_total{model_name="Qwen/Qwen3-8B"} 7.557572e+06
`;

describe('engine /metrics mapping', () => {
  it('maps vLLM v1 names, summing label sets and taking the fullest KV cache', () => {
    expect(engineSampleFromMetrics(parsePrometheusText(VLLM_V1), 10)).toEqual({
      tMs: 10,
      running: 16,
      waiting: 3,
      kvUsage: 0.87,
      preemptionsTotal: 5,
      prefixCacheHitsTotal: 2048,
      generationTokensTotal: 123456,
    });
  });

  it("reads vLLM's decode-time histogram (sum and count, over its engines) where the page has it", () => {
    const page =
      VLLM_V1 +
      `# TYPE vllm:request_decode_time_seconds histogram
vllm:request_decode_time_seconds_sum{engine="0",model_name="m"} 62.8
vllm:request_decode_time_seconds_count{engine="0",model_name="m"} 21.0
vllm:request_decode_time_seconds_sum{engine="1",model_name="m"} 7.2
vllm:request_decode_time_seconds_count{engine="1",model_name="m"} 4.0
`;
    expect(engineSampleFromMetrics(parsePrometheusText(page), 10)).toMatchObject({
      requestDecodeSecondsSum: 70,
      requestDecodeCount: 25,
    });
    expect('requestDecodeSecondsSum' in engineSampleFromMetrics(parsePrometheusText(VLLM_V1), 10)).toBe(false);
  });

  it('maps older vLLM names (gpu_cache_usage_perc, gpu_prefix_cache_hits)', () => {
    expect(engineSampleFromMetrics(parsePrometheusText(VLLM_OLD), 0)).toMatchObject({
      running: 2,
      waiting: 0,
      kvUsage: 0.25,
      preemptionsTotal: 0,
      prefixCacheHitsTotal: 7,
      generationTokensTotal: null,
    });
  });

  it('maps SGLang names (retractions are its preemptions; cached prefill tokens its prefix hits)', () => {
    expect(engineSampleFromMetrics(parsePrometheusText(SGLANG), 0)).toEqual({
      tMs: 0,
      running: 8,
      waiting: 2,
      kvUsage: 0.28,
      preemptionsTotal: 3,
      prefixCacheHitsTotal: 100,
      generationTokensTotal: 7557572,
    });
  });
});

describe('engine scraper', () => {
  it('scrapes on the run clock and reports available', async () => {
    const clock = createMonoClock();
    let calls = 0;
    const get: HttpGetText = async () => {
      calls++;
      return { status: 200, body: VLLM_V1.replace('} 5.0', `} ${5 + calls}.0`) };
    };
    const seen = countdown<EngineSample>(3);
    const t0 = clock.nowMs();
    const scraper = startEngineScraper({ url: 'http://x/metrics', clock, get, intervalMs: 5, onSample: seen.add });
    const samples = await seen.done;
    await scraper.stop();
    expect(await scraper.firstScrape).toEqual({ available: true });
    expect(samples.map((s) => s.preemptionsTotal)).toEqual([6, 7, 8]);
    for (const s of samples) expect(s.tMs).toBeGreaterThanOrEqual(t0);
  });

  it('a missing endpoint leaves engine telemetry unavailable with a reason, without throwing', async () => {
    const clock = createMonoClock();
    const notFound: HttpGetText = async () => ({ status: 404, body: 'Not Found' });
    const s1 = startEngineScraper({
      url: 'http://127.0.0.1:1/metrics',
      clock,
      get: notFound,
      onSample: () => undefined,
    });
    const status = await s1.firstScrape;
    await s1.stop();
    expect(status.available).toBe(false);
    expect(status.reason).toMatch(/HTTP 404/);

    const refused: HttpGetText = async () => {
      throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    };
    const s2 = startEngineScraper({
      url: 'http://127.0.0.1:1/metrics',
      clock,
      get: refused,
      onSample: () => undefined,
    });
    const status2 = await s2.firstScrape;
    await s2.stop();
    expect(status2).toEqual({ available: false, reason: expect.stringMatching(/did not answer \(ECONNREFUSED\)/) });
  });
});
