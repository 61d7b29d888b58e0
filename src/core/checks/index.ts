/** Credibility checks: one module per check, the registry that orders them, their evidence and their prose. */
export { CHECKS, LEVEL_CHECKS, RUN_CHECKS, levelChecks, runChecks } from './registry.js';
export { combineChecks } from './combine.js';
export { levelEvidence, type CutShort, type LevelEvidence, type RunEvidence } from './evidence.js';
export { renderCheck } from './prose.js';
export type { CheckDefinition, LevelCheck, RunCheck } from './define.js';
export type { Judged } from './verdict.js';
