/** Tokens per prefix-cache block, as vLLM's default block size. */
export const PREFIX_BLOCK = 16;

/**
 * Automatic prefix caching over full 16-token blocks: a prompt's leading blocks that an earlier
 * prompt already had are "cached" and skip prefill. A chain hash per block stands for the block's
 * content and everything before it, as vLLM's block hashes do. Bounded to the KV capacity.
 */
export class PrefixCache {
  private readonly blocks = new Map<number, true>();

  constructor(private readonly capacityBlocks: number) {}

  /** Forgets every block (vLLM's /reset_prefix_cache, SGLang's /flush_cache). */
  clear(): void {
    this.blocks.clear();
  }

  /** Returns the cached prefix length (tokens) of ids and remembers ids' blocks. */
  lookupAndInsert(ids: readonly number[]): number {
    let h1 = 0x811c9dc5;
    let h2 = 0x9e3779b9;
    let hits = 0;
    let stillHit = true;
    const full = Math.floor(ids.length / PREFIX_BLOCK);
    for (let b = 0; b < full; b++) {
      for (let i = b * PREFIX_BLOCK; i < (b + 1) * PREFIX_BLOCK; i++) {
        const id = ids[i]!;
        h1 = Math.imul(h1 ^ id, 0x01000193);
        h2 = Math.imul(h2 ^ id, 0x5bd1e995) ^ (h2 >>> 13);
      }
      // 53 bits from two 32-bit hashes: collisions are negligible at cache sizes.
      const key = (h1 >>> 0) * 2097152 + ((h2 >>> 0) & 0x1fffff);
      if (stillHit && this.blocks.has(key)) {
        hits += PREFIX_BLOCK;
        this.blocks.delete(key); // re-insert: most recently used last
      } else {
        stillHit = false;
      }
      this.blocks.set(key, true);
      if (this.blocks.size > this.capacityBlocks) {
        const oldest = this.blocks.keys().next().value;
        if (oldest !== undefined) this.blocks.delete(oldest);
      }
    }
    // The last prompt token is always computed, so a fully cached prompt still needs one.
    return Math.min(hits, Math.max(0, ids.length - 1));
  }
}
