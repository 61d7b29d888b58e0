import { scoresPairs, type PoolingKind } from '../../shared/endpoint-kinds.js';
import type { Prompt } from '../load/prompts.js';

/** The input prompts of request places `positions` (a worker's share): each place holds `batch` consecutive inputs. */
export function inputPositions(positions: readonly number[], batch: number): number[] {
  return positions.flatMap((p) => Array.from({ length: batch }, (_, i) => p * batch + i));
}

/**
 * Groups calibrated input prompts into pooling requests of `batch` inputs each. An embeddings request's expected
 * prompt tokens are the sum of its inputs' (each counted by the server's tokenizer as the embeddings handler counts
 * it); a rerank request's add each pair's overhead (the query and the server's pair template, measured once). Where
 * no count is known the record takes the server's and says it was not counted ahead.
 */
export function groupPoolingPrompts(
  kind: PoolingKind,
  inputs: readonly Prompt[],
  batch: number,
  pairOverhead?: number,
): Prompt[] {
  const perInput = scoresPairs(kind) ? pairOverhead : 0;
  const out: Prompt[] = [];
  for (let i = 0; i + batch <= inputs.length; i += batch) {
    const group = inputs.slice(i, i + batch);
    const counted = group.every((p) => p.tokens !== null);
    const tokens = counted && perInput !== undefined ? group.reduce((a, p) => a + (p.tokens ?? 0) + perInput, 0) : null;
    const prompt: Prompt = { text: group[0]?.text ?? '', tokens, inputs: group.map((p) => p.text) };
    if (tokens !== null) prompt.inputLen = tokens;
    if (tokens === null) prompt.lengthFromServer = true;
    const inexact = group.find((p) => p.inexact !== undefined)?.inexact;
    if (inexact !== undefined) prompt.inexact = inexact;
    out.push(prompt);
  }
  return out;
}
