import { describe, expect, it } from 'vitest';
import { BenchConfigSchema } from '../../src/shared/config.js';
import { dcgmUrls } from '../../src/shared/telemetry.js';

describe('--dcgm-url', () => {
  it('takes one exporter URL per node, comma-separated', () => {
    const config = BenchConfigSchema.parse({ dcgmUrl: 'http://a:9400/metrics, http://b:9400/metrics' });
    expect(dcgmUrls(config.dcgmUrl!)).toEqual(['http://a:9400/metrics', 'http://b:9400/metrics']);
  });

  it('refuses a part that is no http(s) URL, and credentials in a list of several', () => {
    expect(BenchConfigSchema.safeParse({ dcgmUrl: 'http://a:9400/metrics,b:9400' }).success).toBe(false);
    expect(BenchConfigSchema.safeParse({ dcgmUrl: 'http://u:p@a:9400/metrics,http://b/metrics' }).success).toBe(false);
    expect(BenchConfigSchema.safeParse({ dcgmUrl: 'http://u:p@a:9400/metrics' }).success).toBe(true);
  });
});
