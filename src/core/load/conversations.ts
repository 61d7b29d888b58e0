import type { RequestExecutor } from './executor.js';
import type { Prompt, PromptMessage } from './prompts.js';
import type { ScheduledOutcome } from './scheduler.js';
import type { RequestSpec } from './stream-client.js';

/** Counts a chat prompt's tokens with the server's tokenizer, template included (null when it cannot say). */
export type MessagesCounter = (messages: readonly PromptMessage[]) => Promise<number | null>;

/** Options of runConversations. */
export interface ConversationOptions {
  /** Each turn's new user message, conversation after conversation: `turns` prompts per conversation. */
  userPrompts: Prompt[];
  turns: number;
  /** Conversations in flight at once (closed loop). */
  concurrency: number;
  /** Number of the first conversation (recorded per request, unique in the level). */
  firstConversation: number;
  /** Builds a request; `keepText` asks the client to keep the answer (the next turn sends it back). */
  makeSpec: (prompt: Prompt, keepText: boolean) => RequestSpec;
  executor: RequestExecutor;
  onOutcome: (outcome: ScheduledOutcome) => void;
  /** Counts each later turn's whole history (its expected input); absent: the server's count is taken after. */
  countMessages?: MessagesCounter;
  /** Pause between a turn's end and the next turn, ms (0: none). */
  thinkTimeMs?: number;
  /** Waits `ms` (the think time); tests pass one that advances a virtual clock. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal?: AbortSignal;
}

/** A request failed: its conversation has no answer to carry on with. */
function failed(outcome: ScheduledOutcome): boolean {
  return outcome.httpStatus !== 200 || outcome.result.error !== null;
}

/** A later turn whose history could not be counted ahead: its record takes the server's prompt count. */
export function uncountedTurn(prompt: Prompt | undefined): boolean {
  return (prompt?.meta?.turn ?? 0) > 0 && prompt?.inputLen === undefined;
}

/**
 * Closed-loop conversations: `concurrency` conversations in flight, each sending turn t+1 only after turn t ended,
 * with the history [user 1, assistant 1 (the server's actual answer), user 2, ...]. A turn that fails ends its
 * conversation (there is no answer to send back). Each later turn's expected input (its prompt's inputLen) is the
 * history counted by `countMessages`, asked alongside the request and set before this resolves.
 */
export async function runConversations(options: ConversationOptions): Promise<ScheduledOutcome[]> {
  const { userPrompts, turns, executor, signal } = options;
  const count = Math.floor(userPrompts.length / turns);
  const outcomes: ScheduledOutcome[] = [];
  const counts: Array<Promise<void>> = [];
  const think = options.thinkTimeMs ?? 0;
  let next = 0;
  const converse = async (c: number): Promise<void> => {
    const history: PromptMessage[] = [];
    for (let turn = 0; turn < turns && !signal?.aborted; turn++) {
      if (turn > 0 && think > 0) {
        await options.sleep?.(think, signal);
        if (signal?.aborted) return;
      }
      const user = userPrompts[c * turns + turn] as Prompt;
      const messages: PromptMessage[] = [...history, { role: 'user', content: user.text }];
      const prompt: Prompt = {
        text: user.text,
        tokens: turn === 0 ? user.tokens : null,
        messages,
        meta: { conversation: options.firstConversation + c, turn },
      };
      if (turn === 0 && user.inputLen !== undefined) prompt.inputLen = user.inputLen;
      if (turn > 0 && options.countMessages) {
        // Counted alongside the request, so the count never delays the turn.
        counts.push(
          options.countMessages(messages).then(
            (n) => {
              if (n !== null) prompt.inputLen = n;
            },
            () => undefined,
          ),
        );
      }
      const outcome = await executor.execute(options.makeSpec(prompt, turn < turns - 1));
      outcomes.push(outcome);
      options.onOutcome(outcome);
      if (failed(outcome)) return;
      history.push(messages[messages.length - 1] as PromptMessage, {
        role: 'assistant',
        content: outcome.result.text ?? '',
      });
    }
  };
  const lane = async (): Promise<void> => {
    while (next < count && !signal?.aborted) await converse(next++);
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, count) }, lane));
  await Promise.all(counts);
  return outcomes;
}
