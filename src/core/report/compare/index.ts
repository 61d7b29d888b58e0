import { scrubSecrets } from '../../servers/redact.js';
import { compareSeries } from './compare.js';
import { compareHtml } from './html.js';
import { compareMarkdown } from './markdown.js';
import { readCompareInputs } from './read-input.js';

import type { CompareFormat } from '../../../shared/contract.js';

export type { CompareFormat };
/** The formats `servebench compare --format` takes. */
export const COMPARE_FORMATS: readonly CompareFormat[] = ['html', 'md'];

/** Reads the inputs, compares them with the first and renders one format (key-shaped tokens scrubbed). */
export async function renderComparison(
  paths: readonly string[],
  format: CompareFormat,
  options: { seed?: number; replicates?: number; now?: Date } = {},
): Promise<{ text: string; series: number; levels: number }> {
  const series = await readCompareInputs(paths);
  const comparison = compareSeries(series, options);
  const text = format === 'html' ? compareHtml(comparison, options.now) : compareMarkdown(comparison);
  return { text: scrubSecrets(text), series: series.length, levels: comparison.levels.length };
}
