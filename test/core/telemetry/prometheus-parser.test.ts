import { describe, expect, it } from 'vitest';
import {
  getHistogram,
  parsePrometheusText,
  parsePromSampleLine,
  sumMetric,
} from '../../../src/core/telemetry/prometheus-parser.js';

describe('Prometheus text parser', () => {
  it('reads HELP/TYPE, ignores other comments and blank lines', () => {
    const text = parsePrometheusText(
      [
        '# HELP vllm:num_requests_running Number of requests in model execution batches.\\nSecond line \\\\ done',
        '# TYPE vllm:num_requests_running gauge',
        '# a free comment',
        '',
        'vllm:num_requests_running{engine="0",model_name="m"} 3.0',
      ].join('\n'),
    );
    expect(text.types.get('vllm:num_requests_running')).toBe('gauge');
    expect(text.help.get('vllm:num_requests_running')).toBe(
      'Number of requests in model execution batches.\nSecond line \\ done',
    );
    expect(text.samples).toEqual([
      { name: 'vllm:num_requests_running', labels: { engine: '0', model_name: 'm' }, value: 3 },
    ]);
    expect(text.errors).toEqual([]);
  });

  it('unescapes label values: quotes, backslashes, newlines; allows a trailing comma and spaces', () => {
    const s = parsePromSampleLine('m{path="C:\\\\dir",msg="say \\"hi\\"\\nbye", le = "0.5" ,} 1.5e+03 1715680000000');
    expect(s).toEqual({
      name: 'm',
      labels: { path: 'C:\\dir', msg: 'say "hi"\nbye', le: '0.5' },
      value: 1500,
      timestampMs: 1715680000000,
    });
  });

  it('accepts a comma or brace inside a quoted label value', () => {
    expect(parsePromSampleLine('m{a="x,y}z"} 2')?.labels).toEqual({ a: 'x,y}z' });
  });

  it('reads +Inf, -Inf and NaN', () => {
    expect(parsePromSampleLine('a +Inf')?.value).toBe(Infinity);
    expect(parsePromSampleLine('a -Inf')?.value).toBe(-Infinity);
    expect(parsePromSampleLine('a NaN')?.value).toBeNaN();
  });

  it('keeps malformed lines as errors instead of failing', () => {
    const text = parsePrometheusText('good 1\nbad{x="1" 2\n{} 3\nalso_bad one\nok_too 4');
    expect(text.samples.map((s) => s.name)).toEqual(['good', 'ok_too']);
    expect(text.errors).toHaveLength(3);
  });

  it('sums a metric over its label sets', () => {
    const text = parsePrometheusText('x{e="0"} 2\nx{e="1"} 3\ny 9\nx{e="2"} NaN');
    expect(sumMetric(text, 'x')).toBe(5);
    expect(sumMetric(text, 'x', (l) => l.e === '1')).toBe(3);
    expect(sumMetric(text, 'missing')).toBeNull();
  });

  it('reads a histogram from _bucket/_sum/_count, summing label sets, +Inf last', () => {
    const text = parsePrometheusText(
      [
        '# TYPE vllm:time_to_first_token_seconds histogram',
        'vllm:time_to_first_token_seconds_bucket{le="0.1",model_name="a"} 1.0',
        'vllm:time_to_first_token_seconds_bucket{le="+Inf",model_name="a"} 4.0',
        'vllm:time_to_first_token_seconds_bucket{le="0.1",model_name="b"} 2.0',
        'vllm:time_to_first_token_seconds_bucket{le="+Inf",model_name="b"} 2.0',
        'vllm:time_to_first_token_seconds_sum{model_name="a"} 1.25',
        'vllm:time_to_first_token_seconds_count{model_name="a"} 4.0',
        'vllm:time_to_first_token_seconds_count{model_name="b"} 2.0',
      ].join('\n'),
    );
    expect(text.types.get('vllm:time_to_first_token_seconds')).toBe('histogram');
    expect(getHistogram(text, 'vllm:time_to_first_token_seconds')).toEqual({
      buckets: [
        { le: 0.1, count: 3 },
        { le: Infinity, count: 6 },
      ],
      sum: 1.25,
      count: 6,
    });
    expect(getHistogram(text, 'nope')).toBeNull();
  });

  it('handles CRLF line endings', () => {
    expect(parsePrometheusText('a 1\r\nb 2\r\n').samples.map((s) => s.value)).toEqual([1, 2]);
  });
});
