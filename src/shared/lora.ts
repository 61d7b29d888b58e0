/**
 * LoRA adapters as `--lora` writes them (`name[=path][:weight]`, comma-separated) and how a request picks one:
 * the one reading of the list and the one pick, shared by the engines' command lines, the load and the form.
 */

/** One adapter: the name requests carry, where the server loads it from (launched servers), its share of traffic. */
export interface LoraAdapter {
  name: string;
  path?: string;
  weight: number;
}

/** How each request chooses its adapter. */
export type LoraPick = 'round-robin' | 'random';

/** The most adapters one run spreads its traffic over: each gets a row in every table. */
const MAX_LORA_ADAPTERS = 64;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._/-]*$/;

/** The adapters of a `--lora` text, or what is wrong with it in one line. */
export function parseLoraList(text: string): { ok: true; adapters: LoraAdapter[] } | { ok: false; error: string } {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  if (parts.length === 0) return { ok: false, error: 'needs at least one adapter name, such as a,b or a=/path:3' };
  if (parts.length > MAX_LORA_ADAPTERS)
    return { ok: false, error: `at most ${MAX_LORA_ADAPTERS} adapters (got ${parts.length})` };
  const adapters: LoraAdapter[] = [];
  for (const part of parts) {
    const w = part.match(/^(.*):(\d+)$/);
    const weight = w ? Number(w[2]) : 1;
    const spec = w ? (w[1] as string) : part;
    if (weight < 1 || weight > 1000)
      return { ok: false, error: `the weight of '${part}' must be a whole number from 1 to 1000` };
    const eq = spec.indexOf('=');
    const name = eq >= 0 ? spec.slice(0, eq) : spec;
    const path = eq >= 0 ? spec.slice(eq + 1) : undefined;
    if (!NAME.test(name))
      return { ok: false, error: `'${name}' is no adapter name: letters, digits and . _ / - only (got '${part}')` };
    if (path !== undefined && path.length === 0) return { ok: false, error: `'${part}' names no path after =` };
    if (adapters.some((a) => a.name === name)) return { ok: false, error: `adapter '${name}' is named twice` };
    adapters.push({ name, ...(path !== undefined ? { path } : {}), weight });
  }
  return { ok: true, adapters };
}

/** The adapters of a valid `--lora` text (the config schema has checked it); [] for none. */
export function loraAdapters(text: string | undefined): LoraAdapter[] {
  if (text === undefined) return [];
  const parsed = parseLoraList(text);
  return parsed.ok ? parsed.adapters : [];
}

// A 32-bit integer hash (splitmix-style): the same key always draws the same adapter, whatever ran before.
function hashUnit(seed: number, key: number): number {
  let h = (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(key + 1, 0xc2b2ae35)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d) >>> 0;
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b) >>> 0;
  return ((h ^ (h >>> 16)) >>> 0) / 4294967296;
}

/**
 * The adapter of request (or conversation) `key`: round-robin walks the weighted cycle (a:3,b:1 is a,a,a,b), random
 * draws by weight from a hash of the seed and the key, so a rerun picks the same adapters in the same places.
 */
export function pickAdapter(adapters: readonly LoraAdapter[], pick: LoraPick, key: number, seed: number): LoraAdapter {
  const total = adapters.reduce((s, a) => s + a.weight, 0);
  let slot = pick === 'round-robin' ? key % total : Math.floor(hashUnit(seed, key) * total);
  for (const a of adapters) {
    if (slot < a.weight) return a;
    slot -= a.weight;
  }
  return adapters[adapters.length - 1] as LoraAdapter;
}
