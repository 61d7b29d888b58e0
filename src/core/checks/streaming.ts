import type { RequestRecord } from '../../shared/request-record.js';
import type { HostPressure } from '../../shared/run-record.js';
import type { CoalescedItlFinding } from '../metrics/coalesced-itl.js';
import { COALESCED_ITL_SHARE } from '../metrics/coalesced-itl.js';
import { judgeStreaming, type ServerDecodeFigure } from '../metrics/streaming-check.js';
import { MAX_STREAM_TOKENS_PER_S } from '../metrics/stream-timing.js';
import { CLIENT_LIMITS } from './client-limits.js';
import { defineCheck } from './define.js';
import { judged, type Judged } from './verdict.js';

/**
 * streaming: tokens arrived over time, judged by time against the decode time they must have taken (judgeStreaming
 * in streaming-check.ts); a burst no longer than the loop lag this check's client limits let pass may be the client's.
 * serverDecode: the engine's own per-level decode figure, where it reports one. A stream that passed whose ITL is
 * dominated by events read together (`coalescedItl`, see coalesced-itl.ts) warns: its ITL is not the server's.
 * `host`: the host's CPU pressure over the level; a stall while it was busy is said to be the host's.
 */
export function streamingCheck(
  records: readonly RequestRecord[],
  clientLoopLagP99Ms: number | null = null,
  serverDecode: ServerDecodeFigure | null = null,
  coalescedItl: CoalescedItlFinding | null = null,
  host: HostPressure | null = null,
): Judged {
  const streamed = judgeStreaming(records, {
    loopLagP99Ms: clientLoopLagP99Ms,
    loopLagLimitMs: CLIENT_LIMITS.loopLagWarnMs,
    serverDecode,
    host,
  });
  if (streamed.status !== 'pass' || !coalescedItl) return streamed;
  return judged('streaming', 'warn', 'itl-coalesced', { ...streamed.facts, ...coalescedItl.facts });
}

export const streaming = defineCheck('streaming', {
  limits: {
    maxStreamTokensPerS: MAX_STREAM_TOKENS_PER_S,
    coalescedItlShare: COALESCED_ITL_SHARE,
    loopLagLimitMs: CLIENT_LIMITS.loopLagWarnMs,
  },
  evaluate: (e) => streamingCheck(e.streams, e.load.loopLagP99Ms, e.engineDecode, e.coalescedItl, e.host),
});
