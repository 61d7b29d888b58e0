import { attachEngine } from './attach.js';
import { commandEngine } from './command.js';
import { llamacppEngine } from './llamacpp.js';
import { lmdeployEngine } from './lmdeploy.js';
import { sglangEngine } from './sglang.js';
import { simEngine } from './sim.js';
import { trtllmEngine } from './trtllm.js';
import { vllmEngine } from './vllm.js';

/**
 * Every engine servebench knows, one line each, in the order the picker, the help and the docs show them; the
 * first is the default. Adding an engine is its module and one line here: the config schema, the CLI flags and
 * help, YAML, --vary, the app's picker and form and the docs' tables all come from this list.
 */
export const ENGINES = [
  simEngine,
  vllmEngine,
  sglangEngine,
  llamacppEngine,
  trtllmEngine,
  lmdeployEngine,
  commandEngine,
  attachEngine,
] as const;
