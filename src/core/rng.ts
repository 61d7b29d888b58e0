/** A seeded PRNG yielding uniform numbers in [0, 1). */
export type Rng = () => number;

/** mulberry32: tiny and fast; the same seed replays the same prompts, jitter and faults exactly. */
export function createRng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
