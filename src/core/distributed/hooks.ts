import type { LevelResult, RunRecord, ServerVariant } from '../../shared/run-record.js';
import type { LevelPlan } from '../load/level-plan.js';
import type { LevelMeasureInput } from '../run/level-measure.js';
import type { RunSession } from '../run/run-session.js';

/** The seam between a benchmark run and rank 0 of a distributed one: where the workers join, start and are merged. */
export interface DistributedHooks {
  /** After the run folder exists: every worker joins and learns the run; throws (one line) when one does not. */
  begin(run: RunSession): Promise<void>;
  /** A server configuration is up: every worker starts its own session against it. */
  serverReady(
    index: number,
    server: { baseUrl: string; model: string },
    plans: LevelPlan[],
    variant?: ServerVariant,
  ): void;
  /** Measures a level with every worker: each runs its share, rank 0 merges their raw records. */
  measure(input: LevelMeasureInput): Promise<LevelResult | null>;
  /** The run is over (its record final): the workers are told and the rendezvous closes. */
  end(record: RunRecord): Promise<void>;
}
