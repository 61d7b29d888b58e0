import { CHECK_CATALOG, checkApplies, type CheckId } from '../../shared/check-catalog.js';
import { client } from './client.js';
import { clock } from './clock.js';
import { cutShort } from './cut-short.js';
import type { CheckDefinition, LevelCheck, RunCheck } from './define.js';
import { errors } from './errors.js';
import type { LevelEvidence, RunEvidence } from './evidence.js';
import { inputLength } from './input-length.js';
import { outputLength } from './output-length.js';
import { preemptions } from './preemptions.js';
import { prefixCache } from './prefix-cache.js';
import { roundSpread } from './round-spread.js';
import { sampleSize } from './sample-size.js';
import { server } from './server.js';
import { streaming } from './streaming.js';
import { structuredOutput } from './structured-output.js';
import { throttling } from './throttling.js';
import { tokenAgreement } from './token-agreement.js';
import type { Judged } from './verdict.js';
import { warmup } from './warmup.js';

/** Every check's rule by id: the type makes a catalog id without a rule (or a rule without an id) a compile error. */
const DEFINITIONS: { readonly [K in CheckId]: LevelCheck | RunCheck } = {
  'output-length': outputLength,
  'input-length': inputLength,
  streaming,
  'structured-output': structuredOutput,
  warmup,
  'round-spread': roundSpread,
  'sample-size': sampleSize,
  errors,
  'prefix-cache': prefixCache,
  client,
  'token-agreement': tokenAgreement,
  'cut-short': cutShort,
  throttling,
  preemptions,
  clock,
  server,
};

/** Every check in catalog order (the order reports list them in). */
export const CHECKS: ReadonlyArray<LevelCheck | RunCheck> = CHECK_CATALOG.map((c) => DEFINITIONS[c.id]);

/** The checks that judge one level, in order. */
const LEVEL_CHECKS = CHECKS.filter((c): c is LevelCheck => c.scope === 'level');
/** The checks that judge the run as a whole, in order. */
const RUN_CHECKS = CHECKS.filter((c): c is RunCheck => c.scope === 'run');

function evaluateAll<E>(checks: ReadonlyArray<CheckDefinition<E>>, evidence: E): Judged[] {
  return checks.map((c) => c.evaluate(evidence)).filter((c): c is Judged => c !== null);
}

/** A level's checks from its evidence, in order; those that do not apply (no telemetry, not cut short) are absent. */
export function levelChecks(evidence: LevelEvidence): Judged[] {
  const applies = LEVEL_CHECKS.filter((c) => checkApplies(c.id, evidence.endpoint));
  return evaluateAll(applies, evidence);
}

/** The run's own checks (the server's), from the run's evidence. */
export function runChecks(evidence: RunEvidence): Judged[] {
  return evaluateAll(RUN_CHECKS, evidence);
}
