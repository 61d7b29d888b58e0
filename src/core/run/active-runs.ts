import type { RunRecord } from '../../shared/run-record.js';
import type { RunWriter } from '../runs/run-store.js';

/** One run in progress: its record and the writer of its folder. */
export interface ActiveRun {
  record: RunRecord;
  writer: RunWriter;
}

/**
 * The runs a process has in progress, so that a process that must exit now (a second Ctrl-C) can mark them
 * cancelled; the host (CLI, app service) owns one and passes it to every run it starts.
 */
export class ActiveRuns {
  private readonly runs = new Set<ActiveRun>();

  /** Registers a run whose folder exists. */
  add(run: ActiveRun): void {
    this.runs.add(run);
  }

  /** Forgets a run once its folder is final. */
  delete(run: ActiveRun): void {
    this.runs.delete(run);
  }

  /** Marks every run in progress cancelled and writes its run.json synchronously: no folder says "running" for a run that is gone. */
  saveSync(reason: string): void {
    for (const { record, writer } of this.runs) {
      record.status = 'cancelled';
      record.error = reason;
      record.finishedAt = new Date().toISOString();
      try {
        writer.writeRecordSync(record);
      } catch {
        // Nothing more can be done on the way out.
      }
    }
  }
}
