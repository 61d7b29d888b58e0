import type { Summary } from '../../shared/run-record.js';
import { DEFAULT_CONFIDENCE, minSamplesForCi } from '../metrics/percentiles.js';
import { isPooling } from '../../shared/endpoint-kinds.js';
import { defineCheck } from './define.js';
import { judged, type Judged } from './verdict.js';

/** sample-size: every percentile shown (p95, p99) has its confidence interval; warns naming the ones that lack one. */
export function sampleSizeCheck(
  summary: Summary,
  metric: string = 'TTFT',
  confidence: number = DEFAULT_CONFIDENCE,
): Judged {
  const facts = {
    samples: summary.n,
    metric,
    confidence,
    p95Ci: summary.p95Ci !== null,
    p99Ci: summary.p99Ci !== null,
    p95MinSamples: minSamplesForCi(95, confidence),
    p99MinSamples: minSamplesForCi(99, confidence),
  };
  if (facts.p95Ci && facts.p99Ci) return judged('sample-size', 'pass', 'intervals-shown', facts);
  return judged('sample-size', 'warn', 'too-few-samples', facts);
}

export const sampleSize = defineCheck('sample-size', {
  limits: { confidence: DEFAULT_CONFIDENCE },
  // A pooling answer has no first token: its percentiles are E2E's.
  evaluate: (e) => (isPooling(e.endpoint) && e.e2eMs ? sampleSizeCheck(e.e2eMs, 'E2E') : sampleSizeCheck(e.ttftMs)),
});
