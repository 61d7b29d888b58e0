/** Metrics: request records -> level summaries, percentiles with CIs, and cost (docs/architecture.md); the checks are src/core/checks. */
export { percentile } from './percentiles.js';
export { summarizeLevel } from './level-summary.js';
