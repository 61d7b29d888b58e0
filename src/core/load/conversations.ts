import type { RequestExecutor } from './executor.js';
import type { Prompt, PromptMessage } from './prompts.js';
import type { Clock } from '../clock.js';
import { sendRequest, waitUntil } from './scheduler.js';
import type { ScheduledOutcome, WaitUntil } from './scheduler.js';
import type { RequestOutcome, RequestSpec } from './stream-client.js';

/** Counts a chat prompt's tokens with the server's tokenizer, template included (null when it cannot say); `signal` gives up. */
export type MessagesCounter = (messages: readonly PromptMessage[], signal?: AbortSignal) => Promise<number | null>;

/** Open loop: when each conversation arrives, and the cap on turns in flight. */
export interface ConversationArrivals {
  /** Each conversation's first-turn send time, ms after the start (poissonSchedule's offsets). */
  offsetsMs: number[];
  /** Turns in flight at most (--max-concurrency); absent: no cap. */
  maxInFlight?: number;
  clock: Clock;
  /** Waits for an arrival; tests pass one that advances a virtual clock. */
  wait?: WaitUntil;
}

/** Called with each turn's outcome; `skipped` counts the conversation's later turns not sent because this one failed. */
type TurnOutcomeListener = (outcome: ScheduledOutcome, skipped: number) => void;

/** Options of runConversations. */
export interface ConversationOptions {
  /** Each turn's new user message, conversation after conversation: `turns` prompts per conversation. */
  userPrompts: Prompt[];
  turns: number;
  /** Conversations in flight at once (closed loop; ignored when `arrivals` is set). */
  concurrency: number;
  /** Open loop: conversations arrive on this schedule instead of `concurrency` lanes. */
  arrivals?: ConversationArrivals;
  /** Number of the first conversation (recorded per request, unique in the level). */
  firstConversation: number;
  /** Builds a request; `keepText` asks the client to keep the answer (the next turn sends it back). */
  makeSpec: (prompt: Prompt, keepText: boolean) => RequestSpec;
  executor: RequestExecutor;
  onOutcome: TurnOutcomeListener;
  /** Counts each later turn's whole history (its expected input); absent: the server's count is taken after. */
  countMessages?: MessagesCounter;
  /** Told once, on the first history count that failed (an error, a time-out, no count); later turns are not counted. */
  onCountFailed?: (reason: string) => void;
  /** Pause between a turn's end and the next turn, ms (0: none). */
  thinkTimeMs?: number;
  /** Waits `ms` (the think time); tests pass one that advances a virtual clock. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal?: AbortSignal;
  /** False: outcomes go to onOutcome only, none is kept to return (a long level holds none of them). */
  retain?: boolean;
}

/** A request failed: its conversation has no answer to carry on with. */
function failed(outcome: ScheduledOutcome): boolean {
  return outcome.httpStatus !== 200 || outcome.result.error !== null;
}

/** A later turn whose history could not be counted ahead: its record takes the server's prompt count. */
export function uncountedTurn(prompt: Prompt | undefined): boolean {
  return (prompt?.meta?.turn ?? 0) > 0 && prompt?.inputLen === undefined;
}

/** At most `limit` holders at once, served first come first served (undefined: no limit). */
function slots(limit: number | undefined): { acquire: () => Promise<void>; release: () => void } {
  let held = 0;
  const waiting: Array<() => void> = [];
  return {
    acquire: async () => {
      if (limit === undefined || held < limit) {
        held++;
        return;
      }
      // release() hands its slot straight to the first waiter, so `held` stays as it is.
      await new Promise<void>((resolve) => waiting.push(resolve));
    },
    release: () => {
      const next = waiting.shift();
      if (next) next();
      else held--;
    },
  };
}

/** A turn's prompt over the conversation so far; only the first turn's length is known before it is counted. */
function turnPrompt(user: Prompt, messages: PromptMessage[], conversation: number, turn: number): Prompt {
  const prompt: Prompt = {
    text: user.text,
    tokens: turn === 0 ? user.tokens : null,
    messages,
    meta: { conversation, turn },
  };
  if (turn === 0 && user.inputLen !== undefined) prompt.inputLen = user.inputLen;
  return prompt;
}

/**
 * Starts `count` conversations and resolves once each has ended (its last turn freed): at their offsets on the clock
 * (open loop), or `concurrency` lanes that each take the next conversation (closed loop).
 */
async function startConversations(
  options: ConversationOptions,
  count: number,
  converse: (c: number, scheduledMs?: number) => Promise<void>,
): Promise<void> {
  const { arrivals, signal } = options;
  if (arrivals) {
    const wait = arrivals.wait ?? ((tMs, s) => waitUntil(arrivals.clock, tMs, s));
    // As runOpenLoop: the schedule starts just after now, and each arrival is an absolute time on it (no drift).
    const start = arrivals.clock.nowMs() + 5;
    const running: Array<Promise<void>> = [];
    for (let c = 0; c < count && !signal?.aborted; c++) {
      const scheduledMs = start + (arrivals.offsetsMs[c] ?? 0);
      await wait(scheduledMs, signal);
      if (signal?.aborted) break;
      running.push(converse(c, scheduledMs));
    }
    await Promise.all(running);
    return;
  }
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count && !signal?.aborted) await converse(next++);
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, count) }, lane));
}

/**
 * Multi-turn conversations, each sending turn t+1 only after turn t ended (and the think time passed), with the
 * history [user 1, assistant 1 (the server's actual answer), user 2, ...]. Closed loop: `concurrency` conversations
 * in flight. Open loop (`arrivals`): conversation c starts at its offset on the clock (its first turn's outcome
 * carries scheduledMs, so send - scheduled is the schedule lag), with at most `maxInFlight` turns in flight.
 * A turn that fails ends its conversation (there is no answer to send back): its later turns are not sent, and
 * onOutcome is told how many. Each later turn's expected input (its prompt's inputLen) is the history counted by
 * `countMessages`, asked alongside the request and set before this resolves.
 * Offered load: a turn waits for the previous answer's parsed text by design, so a conversation, not a request, is
 * what a lane keeps in flight; a lane takes its next conversation as soon as the last turn ended on the wire.
 */
export async function runConversations(options: ConversationOptions): Promise<ScheduledOutcome[]> {
  const { userPrompts, turns, executor, signal, arrivals } = options;
  const count = Math.floor(userPrompts.length / turns);
  const outcomes: ScheduledOutcome[] = [];
  const counts: Array<Promise<void>> = [];
  // Last turns, recorded once parsed while their lanes already go on.
  const tails: Array<Promise<unknown>> = [];
  const think = options.thinkTimeMs ?? 0;
  const gate = slots(arrivals?.maxInFlight);
  // After one failed count the tokenizer is not asked again: a hung one would hold a socket per turn to --timeout.
  let countFailed = false;
  const countFailure = (reason: string): void => {
    if (countFailed || signal?.aborted) return;
    countFailed = true;
    options.onCountFailed?.(reason);
  };
  const converse = async (c: number, scheduledMs?: number): Promise<void> => {
    const history: PromptMessage[] = [];
    for (let turn = 0; turn < turns && !signal?.aborted; turn++) {
      if (turn > 0 && think > 0) {
        await options.sleep?.(think, signal);
        if (signal?.aborted) return;
      }
      const user = userPrompts[c * turns + turn] as Prompt;
      const messages: PromptMessage[] = [...history, { role: 'user', content: user.text }];
      const prompt = turnPrompt(user, messages, options.firstConversation + c, turn);
      await gate.acquire();
      if (signal?.aborted) {
        gate.release();
        return;
      }
      let counted: Promise<void> = Promise.resolve();
      if (turn > 0 && options.countMessages && !countFailed) {
        // Counted alongside the request, so the count never delays the turn.
        // The level's signal stops the count too: a hung server must not hold a cancelled level up to --timeout.
        counted = options.countMessages(messages, signal).then(
          (n) => {
            if (n !== null) prompt.inputLen = n;
            else countFailure('the server gave no count');
          },
          (error: unknown) => countFailure(error instanceof Error ? error.message : String(error)),
        );
        counts.push(counted);
      }
      const last = turn === turns - 1;
      const sent = sendRequest(executor, options.makeSpec(prompt, !last));
      // A turn stops counting against the cap once its response ended on the wire.
      void sent.freed.then(() => gate.release());
      const settle = (o: RequestOutcome): boolean => {
        const outcome: ScheduledOutcome = turn === 0 && scheduledMs !== undefined ? { ...o, scheduledMs } : o;
        if (options.retain !== false) outcomes.push(outcome);
        // A cancel cuts the level short: the turns it stops are not skipped by a failure.
        const skipped = failed(outcome) && !signal?.aborted ? turns - turn - 1 : 0;
        // The record takes the history's count: it is told once that count (sent alongside) has come back.
        counts.push(counted.then(() => options.onOutcome(outcome, skipped)));
        return !failed(outcome);
      };
      if (last) {
        // Nothing waits for the last answer's text: the lane takes its next conversation at the wire end.
        tails.push(sent.outcome.then(settle));
        await sent.freed;
        return;
      }
      // A later turn sends this answer back: it waits for the parsed text (and the think time), by design.
      const outcome = await sent.outcome;
      if (!settle(outcome)) return;
      history.push(messages[messages.length - 1] as PromptMessage, {
        role: 'assistant',
        content: outcome.result.text ?? '',
      });
    }
  };
  await startConversations(options, count, converse);
  await Promise.all(tails);
  await Promise.all(counts);
  return outcomes;
}
