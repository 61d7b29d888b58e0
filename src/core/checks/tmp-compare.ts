import { appendFileSync } from 'node:fs';
import type { Judged } from './verdict.js';

// TEMPORARY: the old checks' sentences beside the new, word for word (removed once compared).
export const OLD_DETAIL = new WeakMap<object, string>();

export function compareOld(fresh: Judged | null, old: { detail: string; code?: string } | null): void {
  if (fresh === null && old === null) return;
  const line = `${fresh?.id} ${fresh?.code} ${fresh?.detail === old?.detail ? 'same' : 'DIFF'}\n`;
  appendFileSync('/tmp/prose-compare.log', line);
  if (fresh?.detail !== old?.detail || fresh?.code !== old?.code)
    throw new Error(`prose differs:\nnew ${fresh?.code}: ${fresh?.detail}\nold ${old?.code}: ${old?.detail}`);
}
