import type { RequestRecord } from '../../shared/request-record.js';
import { measureOffered } from '../../shared/offered-load.js';
import type { AskedLoad, OfferedMeasure } from '../../shared/offered-load.js';

/** The offered load over a level's measured records, and the records whose schedule lag is the client's. */
export interface OfferedResult extends Omit<OfferedMeasure, 'clientLagged'> {
  clientLagged: RequestRecord[];
}

/** The load the client really offered over a level's measured requests (see src/shared/offered-load.ts). */
export function offeredLoadOf(measured: readonly RequestRecord[], asked: AskedLoad): OfferedResult {
  const m = measureOffered(
    measured.map((r) => ({
      round: r.round,
      sendMs: r.sendMs,
      endMs: r.endMs ?? r.sendMs,
      ok: r.ok,
      ...(r.scheduledMs !== undefined ? { scheduledMs: r.scheduledMs } : {}),
      ...(r.workload?.turn !== undefined ? { conversation: r.workload.conversation ?? -1 - r.id } : {}),
    })),
    asked,
  );
  return { ...m, clientLagged: m.clientLagged.map((i) => measured[i] as RequestRecord) };
}
