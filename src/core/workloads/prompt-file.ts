import { LIMITS } from '../../shared/config.js';
import { UserError } from '../errors.js';
import type { PromptMessage } from '../load/prompts.js';
import { readJsonRecords, type JsonRecord } from './json-records.js';

/** One prompt of a prompt file, as read (lengths are counted later with the server's tokenizer). */
export interface FileEntry {
  /** 0-based record of the file (recorded per request as sourceIndex). */
  sourceIndex: number;
  /** A plain prompt ({"prompt"} lines and ShareGPT's first human turn); absent when messages are given. */
  text?: string;
  /** {"messages"} lines: sent as they are on the chat API. */
  messages?: PromptMessage[];
  /** The file's own output length ({"output_len"}). */
  outputLen?: number;
  /** ShareGPT: the model's reply to the first turn; its token count is the output length (as vLLM's benchmark). */
  reply?: string;
}

const ROLES = new Set(['system', 'user', 'assistant']);

function bad(path: string, r: JsonRecord, what: string): UserError {
  return new UserError(`--prompts ${path}: ${r.where} ${what}`);
}

function outputLenOf(path: string, r: JsonRecord, v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > LIMITS.tokens.max) {
    throw bad(
      path,
      r,
      `has output_len ${JSON.stringify(v).slice(0, 40)}: it must be a whole number from 1 to ${LIMITS.tokens.max}`,
    );
  }
  return v;
}

function messagesOf(path: string, r: JsonRecord, v: unknown): PromptMessage[] {
  if (!Array.isArray(v) || v.length === 0) throw bad(path, r, 'has "messages" that is not a non-empty list');
  return v.map((m: unknown, i) => {
    const o = m as { role?: unknown; content?: unknown } | null;
    if (!o || typeof o !== 'object' || typeof o.role !== 'string' || !ROLES.has(o.role)) {
      throw bad(path, r, `message ${i + 1} needs a role of system, user or assistant`);
    }
    if (typeof o.content !== 'string') throw bad(path, r, `message ${i + 1} needs its content as a string`);
    return { role: o.role as PromptMessage['role'], content: o.content };
  });
}

/** ShareGPT: conversations [{from: human|user, value}, {from: gpt|assistant, value}, ...]; null if it has no full turn. */
function shareGptEntry(path: string, r: JsonRecord, v: unknown): FileEntry | null {
  if (!Array.isArray(v)) throw bad(path, r, 'has "conversations" that is not a list');
  const turn = (i: number): { from: string; value: string } | null => {
    const t = v[i] as { from?: unknown; value?: unknown } | undefined;
    return t && typeof t.from === 'string' && typeof t.value === 'string' ? { from: t.from, value: t.value } : null;
  };
  const ask = turn(0);
  const answer = turn(1);
  // As vLLM's ShareGPT reader: only conversations with a human turn and a reply count.
  if (!ask || !answer || !/^(human|user)$/.test(ask.from) || ask.value.trim() === '' || answer.value.trim() === '')
    return null;
  return { sourceIndex: r.index, text: ask.value, reply: answer.value };
}

function entryOf(path: string, r: JsonRecord): FileEntry | null {
  const o = r.value as Record<string, unknown> | null;
  if (!o || typeof o !== 'object' || Array.isArray(o)) throw bad(path, r, 'is not a JSON object');
  if ('conversations' in o) return shareGptEntry(path, r, o.conversations);
  const outputLen = outputLenOf(path, r, o.output_len ?? o.outputLen);
  if ('messages' in o) {
    const messages = messagesOf(path, r, o.messages);
    if (!messages.some((m) => m.role === 'user')) throw bad(path, r, 'has no user message');
    return { sourceIndex: r.index, messages, ...(outputLen !== undefined ? { outputLen } : {}) };
  }
  if (typeof o.prompt === 'string') {
    if (o.prompt.trim() === '') throw bad(path, r, 'has an empty prompt');
    return { sourceIndex: r.index, text: o.prompt, ...(outputLen !== undefined ? { outputLen } : {}) };
  }
  throw bad(path, r, 'has neither "prompt" (a string), "messages" nor ShareGPT "conversations"');
}

/**
 * Reads up to `max` prompts from a JSONL file of {"prompt": "..."} or {"messages": [...]} lines (optional
 * "output_len"), or a ShareGPT file (JSON array or JSONL of {"conversations": [...]}: the first human turn is the
 * prompt, the reply's length the output length; conversations without one are skipped, as vLLM does).
 */
export async function readPromptFile(path: string, max: number): Promise<FileEntry[]> {
  // ShareGPT skips some conversations: read a margin past what the run needs.
  const records = await readJsonRecords(path, { flag: '--prompts', max: Math.min(max * 2 + 16, max + 100_000) });
  const entries: FileEntry[] = [];
  for (const r of records) {
    const e = entryOf(path, r);
    if (e) entries.push(e);
    if (entries.length >= max) break;
  }
  if (entries.length === 0) {
    throw new UserError(
      `--prompts ${path} has no usable prompt: every conversation lacks a human turn with a reply; check the file`,
    );
  }
  return entries;
}
