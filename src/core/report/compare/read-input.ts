import { readFile, stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { UserError } from '../../errors.js';
import { loadRunFolder } from '../load-run-folder.js';
import { parseResultObjects, seriesFromResultObjects } from './read-result-file.js';
import { seriesFromRunFolder } from './read-servebench.js';
import type { CompareSeries } from './types.js';

/** One compare input: a run folder (or its run.json), a vLLM --save-result file or an SGLang bench_serving .jsonl. */
export async function readCompareInput(path: string): Promise<CompareSeries[]> {
  const full = resolve(path);
  const info = await stat(full).catch(() => null);
  if (!info)
    throw new UserError(
      `nothing at ${full}: give a run folder or a result file of vllm bench serve / sglang bench_serving`,
    );
  if (info.isDirectory() || basename(full) === 'run.json') return seriesFromRunFolder(await loadRunFolder(full), full);
  const text = await readFile(full, 'utf8');
  const label = basename(full).replace(/\.(jsonl?|json)$/i, '');
  return [seriesFromResultObjects(parseResultObjects(text, full), full, label)];
}

/** Every input's series, with labels made unique (two copies of one run keep apart in tables and charts). */
export async function readCompareInputs(paths: readonly string[]): Promise<CompareSeries[]> {
  const all: CompareSeries[] = [];
  for (const p of paths) all.push(...(await readCompareInput(p)));
  const seen = new Map<string, number>();
  for (const s of all) {
    const n = (seen.get(s.label) ?? 0) + 1;
    seen.set(s.label, n);
    if (n > 1) s.label = `${s.label} (${basename(s.path)}${n > 2 ? ` #${n}` : ''})`;
  }
  return all;
}
