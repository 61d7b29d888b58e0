import type { CompareFormat, RunSummary } from '../../shared/contract.js';
import { COMPARE_MAX_RUNS } from '../../shared/contract.js';
import type { ServebenchBridge } from '../../preload/bridge.js';
import { download, type ExportPage } from './export-run.js';
import type { Api } from './transport.js';

/** A run the list offers to compare: finished, readable, with at least one measured level. */
export function comparable(run: RunSummary): boolean {
  return !run.unreadable && run.status !== 'running' && run.levels > 0;
}

/** The picked runs after a checkbox changed: in the order they were picked (the first is the baseline). */
export function togglePick(picked: readonly string[], runId: string, on: boolean): string[] {
  const rest = picked.filter((id) => id !== runId);
  return on && rest.length < COMPARE_MAX_RUNS ? [...rest, runId] : rest;
}

/** The picks still in the list and still comparable (after a refresh, a delete, a rename). */
export function keepPicks(picked: readonly string[], runs: readonly RunSummary[]): string[] {
  const ok = new Set(runs.filter(comparable).map((r) => r.id));
  return picked.filter((id) => ok.has(id));
}

/** The Compare bar's line: what to do next, or what the button will do. */
export function compareHint(count: number): string {
  if (count === 0) return 'Compare: pick two or more runs in the list.';
  if (count === 1) return 'Compare: pick one more run.';
  if (count >= COMPARE_MAX_RUNS) return `${count} runs picked (at most ${COMPARE_MAX_RUNS}); choose the baseline.`;
  return `${count} runs picked; choose the baseline.`;
}

/** The baseline still valid for the picks: the one chosen while it is picked, else the first picked. */
export function baselineOf(picked: readonly string[], chosen: string | null): string | null {
  return chosen !== null && picked.includes(chosen) ? chosen : (picked[0] ?? null);
}

/** The runs in the order compare takes them: the baseline first, then the others as picked. */
export function compareOrder(picked: readonly string[], chosen: string | null): string[] {
  const base = baselineOf(picked, chosen);
  return base === null ? [] : [base, ...picked.filter((id) => id !== base)];
}

/** Where a comparison is saved: Electron's save dialog (the preload bridge has it), else a download. */
export interface CompareSaveHost {
  bridge?: Pick<ServebenchBridge, 'saveComparison'>;
  page: ExportPage;
}

/** Saves a comparison as HTML or Markdown; resolves with one line for the user (empty when the dialog was cancelled). */
export async function saveComparison(
  api: Pick<Api, 'compareRuns'>,
  host: CompareSaveHost,
  runIds: string[],
  format: CompareFormat,
): Promise<string> {
  if (host.bridge?.saveComparison) {
    const { saved } = await host.bridge.saveComparison(runIds, format);
    return saved ? `Saved ${saved}` : '';
  }
  const file = await api.compareRuns(runIds, format);
  download(host.page, file);
  return `Downloaded ${file.fileName}`;
}
