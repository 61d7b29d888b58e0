import type { RunEvent, ServerState } from '../../shared/events.js';

/** Where a server is in its life: the user-visible states plus `idle` (not begun) and `reaping` (exited on its own, group being collected). */
export type LifecycleState = 'idle' | ServerState | 'reaping';

/** Allowed next states for each state; anything else is a bug in the caller. */
export type TransitionTable = Readonly<Record<LifecycleState, readonly LifecycleState[]>>;

/** A launched engine: checks, spawn, readiness, serving, then a stop asked for or an exit nobody asked for. */
export const LAUNCH_TRANSITIONS: TransitionTable = {
  idle: ['checking'],
  checking: ['launching', 'failed'],
  launching: ['loading', 'failed'],
  // stopping: aborted, timed out or stopAll() while loading; reaping: the process exited during start-up.
  loading: ['ready', 'stopping', 'reaping'],
  // reaping: died while serving.
  ready: ['stopping', 'reaping'],
  stopping: ['stopped'],
  // A start that timed out is stopped first, then reported failed.
  stopped: ['failed'],
  reaping: ['failed'],
  failed: [],
};

/** An attached server: polled until it answers (loading repeats with the latest answer), never stopped. */
export const ATTACH_TRANSITIONS: TransitionTable = {
  idle: ['checking'],
  checking: ['loading', 'ready', 'failed'],
  loading: ['loading', 'ready', 'failed'],
  ready: [],
  launching: [],
  stopping: [],
  stopped: [],
  reaping: [],
  failed: [],
};

/** A transition the table does not allow. */
export class IllegalTransitionError extends Error {
  constructor(
    readonly from: LifecycleState,
    readonly to: LifecycleState,
  ) {
    super(`illegal server state transition: ${from} -> ${to}`);
    this.name = 'IllegalTransitionError';
  }
}

/** The explicit state machine of one server; every user-visible state it enters is sent as a 'server-state' event. */
export class Lifecycle {
  #state: LifecycleState = 'idle';

  constructor(
    private readonly table: TransitionTable,
    private readonly emit: (event: RunEvent) => void = () => undefined,
  ) {}

  get state(): LifecycleState {
    return this.#state;
  }

  /** True when `next` is allowed from the current state. */
  can(next: LifecycleState): boolean {
    return this.table[this.#state].includes(next);
  }

  /** Enters `next` (throws IllegalTransitionError when the table forbids it) and reports it. */
  to(next: LifecycleState, detail?: string): void {
    if (!this.can(next)) throw new IllegalTransitionError(this.#state, next);
    this.#state = next;
    if (next === 'idle' || next === 'reaping') return;
    this.emit({ type: 'server-state', state: next, ...(detail !== undefined ? { detail } : {}) });
  }
}
