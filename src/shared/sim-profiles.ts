/** The simulator's bundled profiles (resources/sim-profiles/NAME.yaml; a test holds this list to the folder). */
export const BUNDLED_SIM_PROFILES = [
  'h200-llama8b-bf16',
  'rtx4080-llama8b-int4',
  'h200-dllm-block',
  'thermal-throttle-demo',
  'power-capped',
  'instant',
] as const;
