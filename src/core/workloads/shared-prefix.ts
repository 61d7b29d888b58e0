import { UserError } from '../errors.js';
import { PREFIX_DIGITS, composePrompt, fillerWords, fit, prefixWords, type Prompt } from '../load/prompts.js';
import { mapParallel, type LevelPromptsInput } from './level-input.js';
import type { Workload } from './workload.js';

type SharedPrefixWorkload = Extract<Workload, { kind: 'shared-prefix' }>;

/** The text of group `g`'s shared system prompt with `filler` words: distinct per group and per run. */
function groupSystemText(runNonce: number, group: number, filler: number): string {
  const name = prefixWords(runNonce, 2).concat(prefixWords(group, PREFIX_DIGITS)).join(' ');
  return `You are assistant ${name}. ${fillerWords(filler, runNonce * 104_729 + group).join(' ')}`;
}

/**
 * Shared-prefix prompts: request i of the run belongs to group i mod N (so every round mixes the groups); each
 * group's requests start with the same system prompt of about --prefix-len tokens (a system message on the chat
 * API, the prompt's head on completions), and the rest is unique per request (the usual unique prefix), fitted so
 * that the whole prompt has exactly the level's input length by the server's count.
 */
export async function sharedPrefixPrompts(workload: SharedPrefixWorkload, input: LevelPromptsInput): Promise<Prompt[]> {
  const { plan, runNonce, signal } = input;
  // Every count takes the level's signal: a cancel must not wait for a hung /tokenize up to --timeout.
  const counter = (text: string): Promise<number | null> => input.counter(text, signal);
  const chat = input.api === 'chat';
  const countMessages = input.countMessages;
  if (chat && !countMessages) {
    throw new UserError(
      '--prefix-groups sends a system message, and this server cannot count the tokens of messages (/tokenize with messages): use --api completions',
    );
  }
  // The counter wraps a text in the chat template: its own tokens are not the system prompt's.
  const overhead = await counter('').catch((error: unknown) => {
    if (signal?.aborted) return null;
    throw error;
  });
  if (signal?.aborted) return [];
  const systems = new Map<number, Promise<string>>();
  const systemOf = (g: number): Promise<string> => {
    let s = systems.get(g);
    if (!s) {
      s = fit(
        (f) => groupSystemText(runNonce, g, f),
        workload.prefixLen + (overhead ?? 0),
        workload.prefixLen - 8,
        counter,
      ).then((r) => r.text);
      systems.set(g, s);
    }
    return s;
  };
  const nonce = prefixWords(runNonce, 2);
  return mapParallel(input, async (i) => {
    const index = input.firstIndex + i;
    const group = index % workload.groups;
    const system = await systemOf(group);
    const unique = [...nonce, ...prefixWords(index, PREFIX_DIGITS)];
    const seed = runNonce * 7919 + index;
    const make = (f: number): string => composePrompt(unique, f, seed);
    const count = chat
      ? (text: string) =>
          countMessages!(
            [
              { role: 'system', content: system },
              { role: 'user', content: text },
            ],
            signal,
          )
      : (text: string) => counter(`${system}\n\n${text}`);
    const fitted = await fit(make, plan.inputLen, plan.inputLen - workload.prefixLen - 12, count);
    const prompt: Prompt = {
      text: chat ? fitted.text : `${system}\n\n${fitted.text}`,
      tokens: fitted.tokens,
      inputLen: plan.inputLen,
      meta: { group },
    };
    if (chat) {
      prompt.messages = [
        { role: 'system', content: system },
        { role: 'user', content: fitted.text },
      ];
    }
    return prompt;
  });
}
