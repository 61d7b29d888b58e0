import type { RunSummary } from '../../shared/contract.js';
import { keepPicks, togglePick } from './compare-runs.js';
import type { Api } from './transport.js';

/** The page the app shows. */
export type View =
  | { kind: 'new' }
  | { kind: 'live' }
  | { kind: 'runs' }
  | { kind: 'run'; runId: string }
  | { kind: 'compare'; runIds: string[] };

/** A view's key: a note shown on one page goes once the user moves on. */
export const viewKey = (v: View): string => (v.kind === 'run' ? `run:${v.runId}` : v.kind);

/** The app's own state: the page shown, the runs list, the runs picked to compare and the list's last error. */
export class AppState {
  view = $state<View>({ kind: 'new' });
  runs = $state<RunSummary[]>([]);
  picked = $state<string[]>([]);
  /** The run the comparison is against, chosen in the Compare bar (null: the first picked). */
  baseline = $state<string | null>(null);
  loadError = $state('');
  readonly #api: Pick<Api, 'listRuns'>;

  constructor(api: Pick<Api, 'listRuns'>) {
    this.#api = api;
  }

  /** Opens a page. */
  show(view: View): void {
    this.view = view;
  }

  /** The runs list again; a failure is shown in the banner and the old list kept. */
  async refreshRuns(): Promise<void> {
    try {
      this.runs = await this.#api.listRuns();
      // A refresh (or a rename/delete) can take picked runs out of the list: keep only those still there.
      const kept = keepPicks(this.picked, this.runs);
      if (kept.length !== this.picked.length) this.picked = kept;
    } catch (e) {
      this.loadError = e instanceof Error ? e.message : String(e);
    }
  }

  /** Picks a run for the comparison, or leaves it out. */
  pick(runId: string, on: boolean): void {
    this.picked = togglePick(this.picked, runId, on);
  }

  /** No run picked. */
  clearPicks(): void {
    this.picked = [];
    this.baseline = null;
  }
}
