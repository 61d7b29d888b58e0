/** The simulated engine: a real HTTP server that behaves like vLLM or SGLang on a GPU (docs/simulator.md). */
export {
  startSimServer,
  SimOomError,
  DEFAULT_SIM_MODEL,
  type SimOptions,
  type SimServer,
  type SimEngineCounts,
} from './server.js';
export { type SimClock, type SimTimer } from './sim-clock.js';
export {
  loadBundledProfile,
  loadProfile,
  listProfiles,
  applyOverrides,
  validateProfile,
  denoiseSteps,
  PROFILE_PARAMS,
  BASE_PROFILE,
  DEFAULT_PROFILE_NAME,
  type SimProfile,
} from './profile.js';
export { parseFault, FAULT_SPECS } from './faults.js';
export {
  countTokens,
  tokenize,
  tokenPieces,
  tokenizeChat,
  countChatTokens,
  tokenizeCompletion,
  CHAT_MESSAGE_OVERHEAD,
  CHAT_PROMPT_OVERHEAD,
  OUTPUT_WORDS,
} from './tokenizer.js';
export { type Mimic } from './startup-log.js';
export type { TruthRecord } from './truth-log.js';
export type { FakeGpuState, FakeGpuReading } from './fake-gpu.js';
export { REASON_IDLE, REASON_SW_POWER_CAP, REASON_SW_THERMAL, REASON_HW_THERMAL } from './fake-gpu.js';
