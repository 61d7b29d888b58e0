/** The simulated engine: a real HTTP server that behaves like vLLM or SGLang on a GPU (docs/simulator.md). */
export {
  startSimServer,
  SimOomError,
  DEFAULT_SIM_MODEL,
  type SimOptions,
  type SimServer,
  type SimEngineCounts,
} from './server.js';
export { realSimClock, type SimClock, type SimTimer } from './sim-clock.js';
export {
  loadBundledProfile,
  loadProfile,
  listProfiles,
  applyOverrides,
  validateProfile,
  denoiseSteps,
  profilesDir,
  PROFILE_PARAMS,
  BASE_PROFILE,
  DEFAULT_PROFILE_NAME,
  type SimProfile,
  type ProfileParam,
} from './profile.js';
export { parseFault, foldFaults, FAULT_SPECS, type SimFault, type FaultSet } from './faults.js';
export {
  countTokens,
  tokenize,
  tokenPieces,
  tokenizeChat,
  countChatTokens,
  tokenizeCompletion,
  CHAT_MESSAGE_OVERHEAD,
  CHAT_PROMPT_OVERHEAD,
  COMPLETION_PROMPT_OVERHEAD,
  OUTPUT_WORDS,
} from './tokenizer.js';
export { MIMIC_VERSION, type Mimic } from './startup-log.js';
export type { TruthRecord } from './truth-log.js';
export type { FakeGpuState, FakeGpuReading } from './fake-gpu.js';
export {
  REASON_IDLE,
  REASON_SW_POWER_CAP,
  REASON_HW_SLOWDOWN,
  REASON_SW_THERMAL,
  REASON_HW_THERMAL,
  REASON_HW_POWER_BRAKE,
} from './fake-gpu.js';
