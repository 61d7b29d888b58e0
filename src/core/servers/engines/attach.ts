import { describeEngine } from '../../../shared/engines.js';
import type { EngineModule } from './types.js';

/** A server someone else runs: nothing to launch; the manager probes /health and /v1/models. */
export const attachEngine: EngineModule = {
  kind: 'attach',
  description: describeEngine('attach'),
  noProbeNote: "nothing is launched: servebench connects to the server's URL",
  healthPath: '/health',
  progress: [],
  metricsPath: '/metrics',
  failures: [],
  spawnFix: 'check --url',
  plan() {
    throw new Error('attach launches nothing');
  },
};
