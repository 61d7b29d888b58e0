import { MAX_RUN_MESSAGES, type RunMessage } from '../../shared/run-record.js';

/** A message as said, with the level slot (run event index) it was said during, if any. */
export interface SaidMessage {
  atMs: number;
  severity: RunMessage['severity'];
  text: string;
  serverConfigIndex?: number;
  levelSlot?: number;
}

/**
 * The run's messages, bounded and deduplicated (same severity, text and server configuration: counted), kept in the arrays it was
 * given so that the run record always holds the current list.
 */
export class RunMessageLog {
  /** Messages left out once the log was full. */
  leftOut = 0;
  private readonly byKey = new Map<string, RunMessage>();
  // Level slots are run event indices; the record wants indices into its levels, known only once a level is kept.
  private readonly slotOf = new Map<RunMessage, number>();

  constructor(
    readonly messages: RunMessage[],
    private readonly limit = MAX_RUN_MESSAGES,
  ) {}

  /** Keeps a message, or counts it when the same one was said before; false when the log was full. */
  add(said: SaidMessage): boolean {
    // The same warning from another server configuration is news: it is kept apart, not counted in.
    const key = `${said.serverConfigIndex ?? ''}\u0000${said.severity}\u0000${said.text}`;
    const seen = this.byKey.get(key);
    if (seen) {
      seen.count = (seen.count ?? 1) + 1;
      return true;
    }
    if (this.messages.length >= this.limit) {
      this.leftOut++;
      return false;
    }
    const message: RunMessage = { atMs: said.atMs, severity: said.severity, text: said.text };
    if (said.serverConfigIndex !== undefined) message.serverConfigIndex = said.serverConfigIndex;
    this.messages.push(message);
    this.byKey.set(key, message);
    if (said.levelSlot !== undefined) this.slotOf.set(message, said.levelSlot);
    return true;
  }

  /** Points the messages said during this level slot at the kept level's index (none: the level was not kept). */
  settleLevel(slot: number, levelIndex: number | null): void {
    for (const [message, s] of this.slotOf) {
      if (s !== slot) continue;
      if (levelIndex !== null) message.levelIndex = levelIndex;
      this.slotOf.delete(message);
    }
  }
}
