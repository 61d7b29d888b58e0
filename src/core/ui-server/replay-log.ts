import type { ContractEvent } from '../../shared/contract.js';

/** request-done points a late viewer's replay keeps of one level (thinned evenly as the level grows). */
export const REPLAY_POINTS_PER_LEVEL = 2_000;

/** Other events the replay keeps (levels, phases, messages): a run has few of them. */
const REPLAY_OTHER_EVENTS = 20_000;

interface LevelPoints {
  stride: number;
  seen: number;
  kept: number;
}

/**
 * The run in progress as a late viewer replays it: every event but request-done, and of each level's request-done
 * events every stride-th, the stride doubling whenever the level keeps more than REPLAY_POINTS_PER_LEVEL. So a run
 * of a million requests replays in a few thousand events, and its last level-finished is never crowded out.
 */
export class ReplayLog {
  private events: ContractEvent[] = [];
  private others = 0;
  private levels = new Map<number, LevelPoints>();

  add(event: ContractEvent): void {
    if (event.type === 'run-started' || event.type === 'run-finished') {
      this.events = event.type === 'run-started' ? [event] : [];
      this.others = this.events.length;
      this.levels = new Map();
      return;
    }
    if (event.type !== 'request-done') {
      if (this.others++ < REPLAY_OTHER_EVENTS) this.events.push(event);
      return;
    }
    const level = this.levels.get(event.levelIndex) ?? { stride: 1, seen: 0, kept: 0 };
    this.levels.set(event.levelIndex, level);
    if (level.seen++ % level.stride !== 0) return;
    this.events.push(event);
    if (++level.kept > REPLAY_POINTS_PER_LEVEL) this.halve(event.levelIndex, level);
  }

  /** Drops every other kept point of a level (those off the doubled stride). */
  private halve(levelIndex: number, level: LevelPoints): void {
    let i = 0;
    this.events = this.events.filter((e) => e.type !== 'request-done' || e.levelIndex !== levelIndex || i++ % 2 === 0);
    level.kept = Math.ceil(level.kept / 2);
    level.stride *= 2;
  }

  /** The replay so far, in the order the events came. */
  get all(): readonly ContractEvent[] {
    return this.events;
  }
}
