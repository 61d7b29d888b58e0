import type { ContractEvent } from '../../shared/contract.js';
import { applyEvent, createLiveRun, type LiveRun } from './live-run.js';

/** How often the live view redraws at most while events stream in (a fast run sends hundreds a second). */
const REDRAW_MS = 250;

type RunStartedEvent = Extract<ContractEvent, { type: 'run-started' }>;

/**
 * The live run of the app: plain data folded from the core's events outside Svelte, and a version that moves when it
 * changed. Reading `run` tracks that version, so whatever reads it redraws with the run (at most every REDRAW_MS
 * while requests stream, at once for a start or an end).
 */
export class LiveRunStore {
  #run = $state.raw<LiveRun | null>(null);
  #version = $state(0);
  #timer: ReturnType<typeof setTimeout> | null = null;

  /** The live run (or the last one), null before any. */
  get run(): LiveRun | null {
    void this.#version;
    return this.#run;
  }

  /** True while the live run has not finished. */
  get running(): boolean {
    const run = this.run;
    return run !== null && run.finished === null;
  }

  /** A new live run from its start (a run-started event, or what activeRun answered). */
  start(event: RunStartedEvent, nowMs: number): void {
    this.#run = createLiveRun(event, nowMs);
    this.#version++;
  }

  /** Folds one event in; false when there is no live run to fold it into. */
  apply(event: ContractEvent, nowMs: number): boolean {
    if (event.type === 'run-started') {
      this.start(event, nowMs);
      return true;
    }
    if (!this.#run) return false;
    applyEvent(this.#run, event);
    if (event.type === 'run-finished') this.#version++;
    else this.#redrawSoon();
    return true;
  }

  #redrawSoon(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#version++;
    }, REDRAW_MS);
  }
}
