/** Metrics: request records -> level summaries, percentiles with CIs, and cost (docs/architecture.md); the checks are src/core/checks. */
export { binomialDist, type BinomialDist } from './binomial.js';
export {
  DEFAULT_CONFIDENCE,
  emptySummary,
  minSamplesForCi,
  percentile,
  quantileCi,
  quantileCiRanks,
  summarize,
} from './percentiles.js';
export {
  isCancelled,
  isMeasured,
  poolLatencies,
  requestMetrics,
  type PooledLatencies,
  type RequestMetrics,
} from './request-metrics.js';
export {
  coefficientOfVariation,
  countEstimatedInput,
  requestEndBound,
  roundCv,
  roundResult,
  roundResults,
} from './throughput.js';
export { apiCostPerMillionOutputTokens, blendedApiPrice, costPerMillionOutputTokens } from './cost.js';
export { goodput, meetsSlo } from './goodput.js';
export { summarizeLevel, type LevelSummaryInput } from './level-summary.js';
