import type { EngineKind } from '../../../shared/config.js';
import { ENGINES } from './registry.js';
import type { EngineModule } from './types.js';

export { ENGINES };

const BY_KIND = new Map<string, EngineModule>(ENGINES.map((e) => [e.kind, e as unknown as EngineModule]));

/** The module of an engine kind. */
export function engineFor(kind: EngineKind): EngineModule {
  const engine = BY_KIND.get(kind);
  if (!engine) throw new Error(`engine '${kind}' has no module`);
  return engine;
}

export * from './types.js';
export { formatCommand } from './common.js';
export { VLLM_PROGRESS } from './vllm.js';
export { SGLANG_PROGRESS } from './sglang.js';
export { LLAMACPP_PROGRESS } from './llamacpp.js';
export { splitCommandLine } from './command.js';
