import { eventDialect, isPooling, type EndpointKind } from '../../shared/endpoint-kinds.js';
import type { RunEvent } from '../../shared/events.js';
import type { RequestRecord } from '../../shared/request-record.js';
import type { Clock } from '../clock.js';
import type { RequestExecutor } from './executor.js';
import { runConversations, uncountedTurn } from './conversations.js';
import type { ConversationArrivals, MessagesCounter } from './conversations.js';
import type { LevelPlan } from './level-plan.js';
import { outcomeToRecord } from './outcome-to-record.js';
import { createRng } from '../rng.js';
import { levelAccumulator, type LevelAccumulator } from '../metrics/level-accumulator.js';
import { RecordFlusher } from './record-flusher.js';
import type { Prompt } from './prompts.js';
import { apiPath, buildRequestBody } from './request-body.js';
import type { BodyCompat } from './request-body.js';
import { poissonSchedule, runClosedLoop, runOpenLoop, traceSchedule, waitUntil } from './scheduler.js';
import type { ScheduledOutcome, SpecList, WaitUntil } from './scheduler.js';
import type { RequestSpec } from './stream-client.js';
import { recordLatencies } from '../../shared/request-record.js';
import { pickAdapter, type LoraAdapter, type LoraPick } from '../../shared/lora.js';
import type { StructuredSpec } from '../workloads/structured-spec.js';
import { createStructuredValidator } from './structured-validate.js';

/** --lora: the adapters requests spread over, how each picks one, and how the engine is told which. */
export interface LoraLoad {
  adapters: readonly LoraAdapter[];
  pick: LoraPick;
  /** The request's model names it (vLLM, SGLang), or llama.cpp's `lora: [{id, scale}]` by its --lora place. */
  by: 'model' | 'lora-id';
}

export interface LevelRunInput {
  plan: LevelPlan;
  levelIndex: number;
  /** warm-up prompts first, then rounds x requestsPerRound. */
  prompts: Prompt[];
  executor: RequestExecutor;
  clock: Clock;
  model: string;
  api: EndpointKind;
  compat: BodyCompat;
  ignoreEos: boolean;
  temperature: number;
  timeoutMs: number;
  seed: number;
  /** First request id of this level (ids are unique in the run). */
  firstId: number;
  /** Prefix of x-request-id, unique per run. */
  tagPrefix: string;
  signal: AbortSignal;
  onEvent: (event: RunEvent) => void;
  /** Called with finished records in small batches as they finish (in id order where it can), so they reach disk at once. */
  onRecords: (records: RequestRecord[]) => void;
  /** Called once the warm-up (-1) or a round has handed on all its records, before the next one starts. */
  onBatchDone?: (round: number) => void;
  /** Summarises the level as its records finish (default: one seeded by the level); tests pass smaller bounds. */
  accumulator?: LevelAccumulator;
  /** Multi-turn: counts a history with the server's tokenizer (each later turn's expected input). */
  countMessages?: MessagesCounter;
  /** Multi-turn: waits until a time on `clock` (arrivals, think time); tests pass one that advances a virtual clock. */
  wait?: WaitUntil;
  /** --lora: adapters to spread the requests over (absent: every request asks the base model). */
  lora?: LoraLoad;
  /** --response-format or --tools: sent with every request, and every ok answer held to it. */
  structured?: StructuredSpec;
  /** Distributed runs: awaited before the warm-up (-1) and each round, so every worker starts a batch at one instant. */
  beforeBatch?: (round: number) => Promise<void>;
  /** --precision: asked after each complete round with the rounds done and the measured records; true stops the level. */
  stopAfterRound?: (roundsCompleted: number, measured: readonly RequestRecord[]) => boolean;
}

export interface LevelRunOutput {
  /** The kept records (whole, or condensed once the level outgrew the accumulator's bound): `accumulated`'s lists. */
  warmup: RequestRecord[];
  measured: RequestRecord[];
  /** The level summarised as its requests finished; absent for an output merged from workers' records. */
  accumulated?: LevelAccumulator;
  roundsCompleted: number;
  /** Measured window: first send of round 0 to the last end of the last round. */
  measureStartMs: number | null;
  measureEndMs: number | null;
  aborted: boolean;
  /** Multi-turn: turns of the measured rounds not sent because an earlier turn of their conversation failed. */
  skippedTurns: number;
}

/** The requests of a level in flight: ids handed out, and each one's prompt and body size until its record is made. */
interface RequestBook {
  nextId: number;
  // Each request's own prompt (its expected lengths and workload meta go into its record).
  promptOf: Map<number, Prompt>;
  // Each request's body size bounds the prompt tokens its server can report.
  bodyBytesOf: Map<number, number>;
  // Each request's LoRA adapter, for its record.
  adapterOf: Map<number, string>;
  /** The structured-output check of one answer, when the run asks for one. */
  validate: ReturnType<typeof createStructuredValidator> | null;
}

/** The model field and llama.cpp lora list of one request, its adapter picked by conversation (or request) id. */
function adapterFields(input: LevelRunInput, id: number, prompt: Prompt) {
  const lora = input.lora;
  if (!lora || lora.adapters.length === 0) return { model: input.model };
  // A conversation keeps one adapter over its turns, as a user of a fine-tuned model does.
  const key = prompt.meta?.conversation ?? id;
  const adapter = pickAdapter(lora.adapters, lora.pick, key, input.seed);
  if (lora.by === 'model') return { model: adapter.name, adapter: adapter.name };
  const index = lora.adapters.indexOf(adapter);
  return { model: input.model, adapter: adapter.name, lora: [{ id: index, scale: 1 }] };
}

function makeSpec(input: LevelRunInput, book: RequestBook, prompt: Prompt, keepText = false): RequestSpec {
  const id = book.nextId++;
  book.promptOf.set(id, prompt);
  const { model, adapter, lora } = adapterFields(input, id, prompt);
  if (adapter !== undefined) book.adapterOf.set(id, adapter);
  const spec: RequestSpec = {
    id,
    path: apiPath(input.api),
    body: buildRequestBody({
      api: input.api,
      model,
      ...(lora ? { lora } : {}),
      prompt: prompt.text,
      messages: prompt.messages,
      ...(prompt.inputs && { inputs: prompt.inputs }),
      outputLen: prompt.outputLen ?? input.plan.outputLen,
      ignoreEos: input.ignoreEos,
      temperature: input.temperature,
      stream: true,
      compat: input.compat,
      ...(input.structured && { structured: input.structured }),
    }),
    timeoutMs: input.timeoutMs,
    requestTag: `${input.tagPrefix}-${id}`,
  };
  // A structured answer is checked when its record is made: its text is kept until then.
  if (keepText || input.structured) spec.keepText = true;
  const dialect = eventDialect(input.api);
  if (dialect) spec.events = dialect;
  if (isPooling(input.api)) spec.whole = { kind: input.api, inputs: prompt.inputs?.length ?? 1 };
  book.bodyBytesOf.set(id, Buffer.byteLength(spec.body));
  return spec;
}

function toRecord(input: LevelRunInput, book: RequestBook, o: ScheduledOutcome, round: number): RequestRecord {
  const { plan, levelIndex } = input;
  const prompt = book.promptOf.get(o.id);
  const record = outcomeToRecord(o, {
    levelIndex,
    round,
    expectedIn: prompt?.inputLen ?? plan.inputLen,
    expectedOut: prompt?.outputLen ?? plan.outputLen,
    bodyBytes: book.bodyBytesOf.get(o.id),
    meta: prompt?.meta,
  });
  const adapter = book.adapterOf.get(o.id);
  if (adapter !== undefined) record.adapter = adapter;
  if (book.validate && record.ok) record.structured = book.validate(o.result.text ?? '', o.result.toolCalls ?? []);
  book.promptOf.delete(o.id);
  book.bodyBytesOf.delete(o.id);
  book.adapterOf.delete(o.id);
  if (uncountedTurn(prompt)) {
    // No tokenizer to count the history ahead: the server's count stands in, marked as not verified.
    const turns = (prompt?.meta?.turn ?? 0) + 1;
    record.expectedIn = record.nIn ?? turns * (plan.inputLen + plan.outputLen);
    record.expectedInSource = record.nIn !== null ? 'server' : 'estimated';
  } else if (prompt?.lengthFromServer) {
    // Its length could not be counted ahead: the server's usage count stands in, marked as not verified.
    record.expectedIn = record.nIn ?? plan.inputLen;
    record.expectedInSource = record.nIn !== null ? 'server' : 'estimated';
  }
  return record;
}

type OnOutcome = (o: ScheduledOutcome, skipped?: number) => void;

/** Counts the level's finished requests, hands each record on, and tells the run (progress events). */
function createProgress(input: LevelRunInput, book: RequestBook, flusher: RecordFlusher) {
  const { plan, levelIndex, onEvent } = input;
  const total = plan.warmup + plan.rounds * plan.requestsPerRound;
  let done = 0;
  let failed = 0;
  const counts = { skippedTurns: 0 };
  // A failed turn's conversation ends there: its later turns count as done, so progress still reaches its total.
  const of =
    (round: number): OnOutcome =>
    (o, skipped = 0) => {
      done += 1 + skipped;
      if (round >= 0) counts.skippedTurns += skipped;
      const conversation = book.promptOf.get(o.id)?.meta?.conversation;
      const ok = o.httpStatus === 200 && o.result.error === null;
      if (!ok) failed++;
      flusher.push(toRecord(input, book, o, round));
      onEvent({
        type: 'request-done',
        levelIndex,
        round,
        ok,
        ...recordLatencies({ sendMs: o.sendMs, firstTokenMs: o.result.firstTokenMs, endMs: o.endMs }),
        endMs: o.endMs,
        ...(o.scheduledMs !== undefined ? { scheduledMs: o.scheduledMs } : {}),
        ...(conversation !== undefined ? { conversation } : {}),
        done,
        total,
        failed,
      });
    };
  return { of, counts };
}

type Conversations = (
  userPrompts: Prompt[],
  concurrency: number,
  onOutcome: OnOutcome,
  arrivals?: ConversationArrivals,
) => Promise<ScheduledOutcome[]>;

// Multi-turn: each `turns` prompts are one conversation's user messages (the plan keeps rounds whole).
function conversationRunner(input: LevelRunInput, book: RequestBook, wait: WaitUntil, turns: number): Conversations {
  const { plan, executor, clock, signal, onEvent } = input;
  let conversationsStarted = 0;
  return (userPrompts, concurrency, onOutcome, arrivals) => {
    const firstConversation = conversationsStarted;
    conversationsStarted += Math.floor(userPrompts.length / turns);
    return runConversations({
      userPrompts,
      turns,
      concurrency,
      arrivals,
      firstConversation,
      makeSpec: (prompt, keepText) => makeSpec(input, book, prompt, keepText),
      executor,
      onOutcome,
      retain: false,
      countMessages: input.countMessages,
      onCountFailed: (reason) =>
        onEvent({
          type: 'message',
          severity: 'warn',
          text: `a multi-turn history could not be counted (${reason}): this level's later turns take the server's own prompt count, not verified`,
        }),
      thinkTimeMs: plan.thinkTimeMs,
      sleep: (ms, s) => wait(clock.nowMs() + ms, s),
      signal,
    });
  };
}

/** What a batch (the warm-up or a round) needs to send its requests. */
interface BatchRunner {
  input: LevelRunInput;
  wait: WaitUntil;
  turns: number | null;
  conversations: Conversations;
  specsOf(batch: Prompt[]): SpecList;
  rng: ReturnType<typeof createRng>;
}

// One measured round: conversations, an open loop (rate or trace schedule) or a closed loop.
async function sendRound(run: BatchRunner, roundPrompts: Prompt[], onOutcome: OnOutcome): Promise<unknown> {
  const { plan, executor, clock, signal } = run.input;
  const turns = run.turns;
  if (turns) {
    return run.conversations(
      roundPrompts,
      plan.concurrency,
      onOutcome,
      plan.rate !== undefined
        ? {
            // --rate counts requests (turns): conversations of K turns arrive at rate / K per second.
            offsetsMs: poissonSchedule(Math.floor(roundPrompts.length / turns), plan.rate / turns, run.rng),
            maxInFlight: plan.maxInFlight,
            clock,
            wait: run.wait,
          }
        : undefined,
    );
  }
  const specs = run.specsOf(roundPrompts);
  if (plan.rate !== undefined || plan.schedule) {
    const offsets = plan.schedule
      ? traceSchedule(plan.schedule, plan.scheduleOriginMs)
      : poissonSchedule(specs.length, plan.rate ?? 0, run.rng);
    return runOpenLoop(specs, offsets, plan.maxInFlight, executor, clock, onOutcome, signal, undefined, false);
  }
  return runClosedLoop(specs, plan.concurrency, executor, onOutcome, signal, false);
}

// Measured window: first send of round 0 to the last end of the last round.
function markMeasuredWindow(out: LevelRunOutput): void {
  for (const r of out.measured) {
    out.measureStartMs = out.measureStartMs === null ? r.sendMs : Math.min(out.measureStartMs, r.sendMs);
    const end = r.endMs ?? r.sendMs;
    out.measureEndMs = out.measureEndMs === null ? end : Math.max(out.measureEndMs, end);
  }
}

/** Runs one level: warm-up (discarded later), then R rounds of N requests, closed or open loop. */
export async function runLevel(input: LevelRunInput): Promise<LevelRunOutput> {
  const { plan, levelIndex, prompts, executor, clock, signal, onEvent } = input;
  const book: RequestBook = {
    nextId: input.firstId,
    promptOf: new Map(),
    bodyBytesOf: new Map(),
    adapterOf: new Map(),
    validate: input.structured ? createStructuredValidator(input.structured) : null,
  };
  const wait: WaitUntil = input.wait ?? ((tMs, s) => waitUntil(clock, tMs, s));
  const acc = input.accumulator ?? levelAccumulator(input.seed, levelIndex);
  // Each record is handed on (to disk) before the accumulator keeps what the summary needs of it.
  const flusher = new RecordFlusher((records) => {
    input.onRecords(records);
    for (const r of records) acc.add(r);
  });
  const progress = createProgress(input, book, flusher);
  const out: LevelRunOutput = {
    warmup: acc.warmup,
    measured: acc.measured,
    accumulated: acc,
    roundsCompleted: 0,
    measureStartMs: null,
    measureEndMs: null,
    aborted: false,
    skippedTurns: 0,
  };
  const turns = (plan.turns ?? 1) > 1 ? (plan.turns as number) : null;
  const run: BatchRunner = {
    input,
    wait,
    turns,
    conversations: conversationRunner(input, book, wait, turns ?? 1),
    // A round's requests are built as they are sent: only those in flight hold a body.
    specsOf: (batch) => ({ length: batch.length, at: (i) => makeSpec(input, book, batch[i]!) }),
    rng: createRng(input.seed * 31 + levelIndex),
  };
  const endBatch = (round: number): void => {
    flusher.endBatch();
    input.onBatchDone?.(round);
  };
  let cursor = 0;
  if (plan.warmup > 0 && !signal.aborted) await input.beforeBatch?.(-1);
  if (plan.warmup > 0 && !signal.aborted) {
    onEvent({ type: 'phase', levelIndex, phase: 'warmup' });
    const warmConcurrency = plan.maxInFlight ?? Math.max(1, plan.concurrency || plan.warmup);
    flusher.startBatch(book.nextId);
    const warmPrompts = prompts.slice(0, plan.warmup);
    if (turns) await run.conversations(warmPrompts, warmConcurrency, progress.of(-1));
    else await runClosedLoop(run.specsOf(warmPrompts), warmConcurrency, executor, progress.of(-1), signal, false);
    cursor = plan.warmup;
    endBatch(-1);
  }
  for (let round = 0; round < plan.rounds && !signal.aborted; round++) {
    await input.beforeBatch?.(round);
    if (signal.aborted) break;
    onEvent({ type: 'phase', levelIndex, phase: 'measure', round });
    const roundPrompts = prompts.slice(cursor, cursor + plan.requestsPerRound);
    cursor += plan.requestsPerRound;
    flusher.startBatch(book.nextId);
    await sendRound(run, roundPrompts, progress.of(round));
    endBatch(round);
    if (!signal.aborted) out.roundsCompleted++;
    if (!signal.aborted && input.stopAfterRound?.(out.roundsCompleted, acc.measured)) break;
  }
  out.aborted = signal.aborted;
  out.skippedTurns = progress.counts.skippedTurns;
  markMeasuredWindow(out);
  return out;
}
