import { defineRunCheck } from './define.js';
import type { RunEvidence } from './evidence.js';
import { judged, type Judged } from './verdict.js';

/**
 * server: the server became ready and stayed up for the whole run; fails when one died or none became ready (then
 * only when the run failed for it), warns on the simulator. Null for a run that never got to start a server.
 */
export function serverCheck(e: RunEvidence): Judged | null {
  const facts = { simulated: e.simulated, serversStarted: e.serversStarted };
  if (e.serverFailure)
    return judged('server', 'fail', 'server-died', {
      ...facts,
      message: e.serverFailure.message,
      fix: e.serverFailure.fix,
    });
  if (e.serversStarted === 0) {
    return e.failure ? judged('server', 'fail', 'never-ready', { ...facts, reason: e.failure }) : null;
  }
  return e.simulated ? judged('server', 'warn', 'simulated', facts) : judged('server', 'pass', 'stayed-up', facts);
}

export const server = defineRunCheck('server', { limits: {}, evaluate: serverCheck });
