import type { EngineKind } from '../../../shared/config.js';
import { ENGINE_KINDS } from '../../../shared/engines.js';
import { attachEngine } from './attach.js';
import { commandEngine } from './command.js';
import { llamacppEngine } from './llamacpp.js';
import { sglangEngine } from './sglang.js';
import { simEngine } from './sim.js';
import type { EngineModule } from './types.js';
import { vllmEngine } from './vllm.js';

/** The registry: every engine module, in the order of ENGINE_KINDS (src/shared/engines.ts). */
export const ENGINES: readonly EngineModule[] = [
  simEngine,
  vllmEngine,
  sglangEngine,
  llamacppEngine,
  commandEngine,
  attachEngine,
];

const BY_KIND = new Map<EngineKind, EngineModule>(ENGINES.map((e) => [e.kind, e]));
for (const kind of ENGINE_KINDS) if (!BY_KIND.has(kind)) throw new Error(`engine '${kind}' has no module`);

/** The module of an engine kind. */
export function engineFor(kind: EngineKind): EngineModule {
  return BY_KIND.get(kind) as EngineModule;
}

export * from './types.js';
export { formatCommand } from './common.js';
export { VLLM_METRICS, VLLM_PROGRESS, vllmDiffusionArgs } from './vllm.js';
export { SGLANG_METRICS, SGLANG_PROGRESS } from './sglang.js';
export { LLAMACPP_METRICS, LLAMACPP_PROGRESS, isLocalModel, perSlotContext } from './llamacpp.js';
export { splitCommandLine } from './command.js';
