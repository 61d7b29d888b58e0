import { scrubSecrets } from '../../servers/redact.js';
import { compareSeries } from './compare.js';
import { compareHtml } from './html.js';
import { compareMarkdown } from './markdown.js';
import { readCompareInputs } from './read-input.js';
import type { CompareInputOptions } from './read-input.js';
import { compareText } from './text.js';

import type { CompareFormat } from '../../../shared/contract.js';

/** The formats the app's comparison takes (and `servebench compare --format`). */
const COMPARE_FORMATS: readonly CompareFormat[] = ['html', 'md'];

/** What `servebench compare --format` takes: the app's formats and the terminal's table. */
export type CompareCliFormat = CompareFormat | 'table';
export const COMPARE_CLI_FORMATS: readonly CompareCliFormat[] = [...COMPARE_FORMATS, 'table'];

/** Reads the inputs, compares them with the first and renders one format (key-shaped tokens scrubbed). */
export async function renderComparison(
  paths: readonly string[],
  format: CompareCliFormat,
  options: { seed?: number; replicates?: number; now?: Date } & CompareInputOptions = {},
): Promise<{ text: string; series: number; levels: number }> {
  const series = await readCompareInputs(paths, { formatIn: options.formatIn });
  const comparison = compareSeries(series, options);
  const text =
    format === 'html'
      ? compareHtml(comparison, options.now)
      : format === 'table'
        ? compareText(comparison)
        : compareMarkdown(comparison);
  return { text: scrubSecrets(text), series: series.length, levels: comparison.levels.length };
}
