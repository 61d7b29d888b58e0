import type { ServerResponse } from 'node:http';
import type { SimClock } from './sim-clock.js';
import { OUTPUT_WORDS } from './tokenizer.js';
import type { TruthRecord } from './truth-log.js';
import { EOS_TOKEN_ID, type UsageCounts, type WireFormat } from './wire-format.js';

/** Which API shape a response takes. */
export type ApiKind = 'chat' | 'completions' | 'generate';

/** Per-request decisions made when the request arrives (faults are sampled once, with the seeded RNG). */
export interface ResponderOptions {
  api: ApiKind;
  stream: boolean;
  model: string;
  id: string;
  created: number;
  promptTokens: number;
  cachedTokens: number;
  target: number;
  finishReason: 'length' | 'stop' | 'tool_calls';
  /** A structured answer (chat, completions): its tokens in order, sent instead of words; a tool call's arguments. */
  answer?: { kind: 'text' | 'tool'; pieces: string[]; name?: string };
  includeUsage: boolean;
  continuousUsage: boolean;
  /** The engine's usage and finish-field shapes (vLLM's or SGLang's). */
  wire: WireFormat;
  /** Reasoning mode (chat only): the first N generated tokens stream as delta.reasoning_content; 0 = off. */
  reasoningTokens: number;
  /** Where in the vocabulary this request's text starts (deterministic per request). */
  wordOffset: number;
  /** Completion-token count after which an error event ends the stream; -1 = none. */
  midstreamErrorAt: number;
  /** Completion-token count before which one broken SSE line is inserted; -1 = none. */
  malformedAt: number;
  buffered: boolean;
  closeAfterStream: boolean;
  echoRequestId: string | null;
  truth: TruthRecord | null;
  /** receive time (clock.nowMs()) for the engine's TTFT histogram. */
  receivedMs: number;
  /** The engine's clock: truth timestamps and TTFT. */
  clock: SimClock;
  onFirstToken?: (ttftMs: number) => void;
  /** At the end of a request: its first to its last generated token (engine time, however it was written). */
  onDecoded?: (decodeMs: number) => void;
  onEnd?: (record: TruthRecord | null) => void;
  /** Ends the sequence in the engine (midstream error). */
  abort?: () => void;
}

const WORDS = OUTPUT_WORDS;
const NWORDS = WORDS.length;

/**
 * Zero-delay mode answers many identical requests: the whole SSE body of a (shape, words) pair is
 * built once and reused, with only the response id patched in, so the sim is never what limits a
 * client benchmark. Bounded in bytes; cleared when full.
 */
const bodyCache = new Map<string, { body: Buffer; idOffsets: number[]; chunks: number }>();
let bodyCacheBytes = 0;
const BODY_CACHE_LIMIT = 64 * 1024 * 1024;

/** Writes one request's response: streaming SSE in its engine's wire format, or one JSON body. */
export class Responder {
  private generated = 0;
  private text = '';
  private buffer = '';
  private started = false;
  private finished = false;
  private readonly head: string;
  private readonly encoding: BufferEncoding;

  constructor(
    private readonly res: ServerResponse,
    private readonly o: ResponderOptions,
  ) {
    const model = JSON.stringify(o.model);
    this.head =
      o.api === 'chat'
        ? `data: {"id":"${o.id}","object":"chat.completion.chunk","created":${o.created},"model":${model},"choices":[`
        : `data: {"id":"${o.id}","object":"text_completion","created":${o.created},"model":${model},"choices":[`;
    // Generated text is ASCII; when the model name and id are too, latin1 writes are a plain copy
    // instead of a UTF-8 encode (zero-delay mode writes hundreds of MB/s).
    this.encoding = /^[\x20-\x7e]*$/.test(this.head) ? 'latin1' : 'utf8';
    res.on('close', () => {
      if (!this.finished) {
        this.finished = true;
        o.abort?.();
        this.endTruth('abort');
      }
    });
  }

  /** Sends the response head (streaming: headers now, body as tokens come). */
  start(): void {
    if (!this.o.stream) return;
    const headers: Record<string, string> = {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
    };
    if (this.o.echoRequestId) headers['x-request-id'] = this.o.echoRequestId;
    if (this.o.closeAfterStream) headers.connection = 'close';
    this.res.writeHead(200, headers);
    this.res.flushHeaders();
  }

  /** Called by the engine: `count` new tokens in chunks of `chunkTokens`; `done` ends the response. */
  onTokens(count: number, done: boolean, chunkTokens: number): void {
    if (this.finished) return;
    this.noteGenerated(count, done);
    if (!this.o.stream) {
      this.generated += count;
      if (done) this.endNonStream();
      return;
    }
    if (done && this.generated === 0 && count === this.o.target && this.wholeBodyCacheable()) {
      this.writeWholeBody(count, chunkTokens);
      return;
    }
    let out = '';
    const truth = this.o.truth;
    const marks: number[] | null = truth ? [] : null;
    let remaining = count;
    let tokens = 0;
    let errored = false;
    while (remaining > 0) {
      let n = Math.min(chunkTokens, remaining);
      const errAt = this.o.midstreamErrorAt;
      if (errAt >= 0 && this.generated + n > errAt) {
        n = errAt - this.generated;
        errored = true;
      }
      if (n > 0) {
        if (
          this.generated === this.o.malformedAt ||
          (this.generated < this.o.malformedAt && this.generated + n > this.o.malformedAt)
        ) {
          // A broken line, inserted (not replacing a chunk) so the token count stays whole.
          out += `data: {"id":"${this.o.id}","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"\n\n`;
        }
        remaining -= n;
        const last = done && remaining === 0 && !errored;
        out += this.chunk(n, last);
        tokens += n;
        marks?.push(n);
      }
      if (errored) break;
    }
    if (errored) {
      out +=
        'data: {"error":{"message":"simulated engine error (midstream-error-rate fault)","type":"InternalServerError","param":null,"code":500}}\n\n' +
        'data: [DONE]\n\n';
      this.write(out, tokens, marks, true);
      this.finish('error');
      this.o.abort?.();
      return;
    }
    if (done) {
      if (this.o.includeUsage && this.o.api !== 'generate') {
        out += this.usageChunk();
      }
      out += 'data: [DONE]\n\n';
    }
    this.write(out, tokens, marks, done);
    if (done) this.finish(this.o.finishReason);
  }

  private wholeBodyCacheable(): boolean {
    const o = this.o;
    return !o.buffered && o.midstreamErrorAt < 0 && o.malformedAt < 0 && !o.answer;
  }

  /** The whole stream in one write, from the body cache when an identical one was built before. */
  private writeWholeBody(count: number, chunkTokens: number): void {
    const o = this.o;
    const key = `${o.wire.name}|${o.api}|${o.reasoningTokens}|${o.promptTokens}|${o.cachedTokens}|${count}|${chunkTokens}|${o.finishReason}|${o.includeUsage}|${o.continuousUsage}|${o.wordOffset}|${o.id.length}|${o.model}`;
    let entry = bodyCache.get(key);
    let body: Buffer;
    if (entry) {
      body = Buffer.allocUnsafe(entry.body.length);
      entry.body.copy(body);
      for (const off of entry.idOffsets) body.write(o.id, off, 'latin1');
      this.generated = count;
      if (o.api === 'generate') this.text = ''; // not needed after the end
    } else {
      let out = '';
      let remaining = count;
      let chunks = 0;
      while (remaining > 0) {
        const n = Math.min(chunkTokens, remaining);
        remaining -= n;
        out += this.chunk(n, remaining === 0);
        chunks++;
      }
      if (o.includeUsage && o.api !== 'generate') {
        out += this.usageChunk();
      }
      out += 'data: [DONE]\n\n';
      body = Buffer.from(out, this.encoding);
      if (this.encoding === 'latin1') {
        const idOffsets: number[] = [];
        const needle = Buffer.from(`"${o.id}"`, 'latin1');
        for (let i = body.indexOf(needle); i >= 0; i = body.indexOf(needle, i + needle.length)) idOffsets.push(i + 1);
        if (bodyCacheBytes + body.length > BODY_CACHE_LIMIT) {
          bodyCache.clear();
          bodyCacheBytes = 0;
        }
        entry = { body, idOffsets, chunks };
        bodyCache.set(key, entry);
        bodyCacheBytes += body.length;
      }
    }
    const marks: number[] | null = o.truth ? [] : null;
    if (marks) {
      for (let left = count; left > 0; left -= chunkTokens) marks.push(Math.min(chunkTokens, left));
    }
    this.writeBuffer(body, count, marks);
    this.finish(o.finishReason);
  }

  /** Reasoning tokens generated so far (reasoning mode), capped by what was generated. */
  private reasoningSoFar(): number {
    return Math.min(this.o.reasoningTokens, this.generated);
  }

  /** The counts of usage after `completion` tokens (reasoning ones counted only in reasoning mode). */
  private counts(completion: number): UsageCounts {
    const o = this.o;
    return {
      promptTokens: o.promptTokens,
      completionTokens: completion,
      reasoningTokens: o.reasoningTokens > 0 ? Math.min(o.reasoningTokens, completion) : null,
      cachedTokens: o.cachedTokens,
    };
  }

  /** The final usage chunk (stream_options.include_usage): no choices, the whole request's usage. */
  private usageChunk(): string {
    const { wire, api } = this.o;
    const counts = this.counts(this.generated);
    return `${this.head}],"usage":${api === 'completions' ? wire.completionsStreamUsage(counts) : wire.usage(counts)}}\n\n`;
  }

  /** Per-chunk usage (continuous_usage_stats) after `completion` tokens; empty when not asked for. */
  private chunkUsage(completion: number): string {
    return this.o.continuousUsage ? `,"usage":${this.o.wire.chunkUsage(this.counts(completion))}` : '';
  }

  /** Notes the first token and, with a truth log, stamps the chunks right before they are written. */
  private stampTokens(tokens: number, marks: number[] | null): void {
    if (tokens <= 0) return;
    if (!this.started) this.noteFirstToken();
    const truth = this.o.truth;
    if (truth && marks) {
      const ns = this.o.clock.nowNs().toString();
      truth.firstTokenNs ??= ns;
      if (this.o.reasoningTokens > 0 && this.generated > this.o.reasoningTokens) truth.firstContentNs ??= ns;
      for (const m of marks) truth.chunks.push([ns, m]);
    }
  }

  private writeBuffer(body: Buffer, tokens: number, marks: number[] | null): void {
    this.stampTokens(tokens, marks);
    this.res.end(body);
  }

  /** One SSE event carrying n tokens; updates the generated count. */
  private chunk(n: number, last: boolean): string {
    const answer = this.o.answer;
    let piece = '';
    if (answer) piece = JSON.stringify(answer.pieces.slice(this.generated, this.generated + n).join('')).slice(1, -1);
    else for (let i = 0; i < n; i++) piece += WORDS[(this.o.wordOffset + this.generated + i) % NWORDS];
    const first = this.generated === 0;
    this.generated += n;
    const o = this.o;
    if (o.api === 'generate') {
      this.text += piece;
      const fr = last ? this.sglangFinish() : 'null';
      return `data: {"text":"${this.text}","meta_info":{"id":"${o.id}","finish_reason":${fr},"prompt_tokens":${o.promptTokens},"completion_tokens":${this.generated},"cached_tokens":${o.cachedTokens}},"index":0}\n\n`;
    }
    const usage = this.chunkUsage(this.generated);
    if (o.api === 'chat') {
      // Both engines send a role-only chunk before the first content; SGLang ends with a finish-only chunk.
      const ownFinish = o.wire.chatFinishChunk;
      const fr = o.wire.finish(last && !ownFinish ? o.finishReason : null);
      const roleUsage = o.wire.roleChunkUsage ? this.chunkUsage(0) : '';
      const role = first
        ? `${this.head}{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,${o.wire.finish(null)}}]${roleUsage}}\n\n`
        : '';
      const end =
        last && ownFinish
          ? `${this.head}{"index":0,"delta":{},"logprobs":null,${o.wire.finish(o.finishReason)}}]}\n\n`
          : '';
      const before = this.generated - n;
      const thinking = Math.max(0, Math.min(n, o.reasoningTokens - before));
      if (thinking === 0) {
        const delta =
          answer?.kind === 'tool' ? toolDelta(first, answer.name ?? '', o.id, piece) : `"content":"${piece}"`;
        return `${role}${this.head}{"index":0,"delta":{${delta}},"logprobs":null,${fr}}]${usage}}\n\n${end}`;
      }
      // Reasoning tokens go out as reasoning_content; a chunk that crosses into the answer is sent as two events.
      const cut = this.pieceLength(n, thinking);
      const thinkUsage = this.chunkUsage(before + thinking);
      const thinkFr = thinking === n ? fr : o.wire.finish(null);
      let events = `${role}${this.head}{"index":0,"delta":{"reasoning_content":"${piece.slice(0, cut)}"},"logprobs":null,${thinkFr}}]${thinking === n ? usage : thinkUsage}}\n\n`;
      if (thinking < n) {
        events += `${this.head}{"index":0,"delta":{"content":"${piece.slice(cut)}"},"logprobs":null,${fr}}]${usage}}\n\n`;
      }
      return events + end;
    }
    const fr = o.wire.finish(last ? o.finishReason : null);
    return `${this.head}{"index":0,"text":"${piece}","logprobs":null,${fr}}]${usage}}\n\n`;
  }

  /** Characters of the first k words of the n just generated (every word is one token). */
  private pieceLength(n: number, k: number): number {
    let len = 0;
    const from = this.o.wordOffset + this.generated - n;
    for (let i = 0; i < k; i++) len += WORDS[(from + i) % NWORDS]!.length;
    return len;
  }

  private sglangFinish(): string {
    return this.o.finishReason === 'length'
      ? `{"type":"length","length":${this.generated}}`
      : `{"type":"stop","matched":${EOS_TOKEN_ID}}`;
  }

  /** Hands a piece of the stream to the socket; the truth timestamp is taken right here. */
  private write(out: string, tokens: number, marks: number[] | null, ending: boolean): void {
    if (this.o.buffered) {
      // Streaming that is not really streaming: everything is held back until the end.
      this.buffer += out;
      this.bufferedTokens += tokens;
      if (marks) for (const m of marks) this.bufferedMarks.push(m);
      if (!ending) return;
      out = this.buffer;
      tokens = this.bufferedTokens;
      marks = this.bufferedMarks;
    }
    this.stampTokens(tokens, marks);
    if (ending) this.res.end(out, this.encoding);
    else this.res.write(out, this.encoding);
    // Node corks a response's socket until the next tick: flush now, so the chunk leaves when the truth says.
    const socket = this.res.socket;
    while (socket && socket.writableCorked > 0) socket.uncork();
  }

  private bufferedTokens = 0;
  private readonly bufferedMarks: number[] = [];
  private firstGeneratedMs: number | null = null;
  private lastGeneratedMs = 0;

  /** The engine's own decode time, as vLLM stamps it: when tokens were made, not when they were written. */
  private noteGenerated(count: number, done: boolean): void {
    if (count > 0) {
      const now = this.o.clock.nowMs();
      this.firstGeneratedMs ??= now;
      this.lastGeneratedMs = now;
    }
    if (done && this.firstGeneratedMs !== null) this.o.onDecoded?.(this.lastGeneratedMs - this.firstGeneratedMs);
  }

  private noteFirstToken(): void {
    this.started = true;
    this.o.onFirstToken?.(this.o.clock.nowMs() - this.o.receivedMs);
  }

  private endNonStream(): void {
    const o = this.o;
    let text = '';
    let reasoning = '';
    const thinking = o.api === 'chat' ? this.reasoningSoFar() : 0;
    for (let i = 0; i < this.generated; i++) {
      if (i < thinking) reasoning += WORDS[(o.wordOffset + i) % NWORDS];
      else text += o.answer ? (o.answer.pieces[i] ?? '') : WORDS[(o.wordOffset + i) % NWORDS];
    }
    const toolCall = o.answer?.kind === 'tool';
    const toolCalls = toolCall
      ? [{ id: `call_${o.id}`, type: 'function', function: { name: o.answer?.name, arguments: text } }]
      : [];
    const usage = JSON.parse(o.wire.usage(this.counts(this.generated))) as unknown;
    const finish = JSON.parse(`{${o.wire.finish(o.finishReason)}}`) as Record<string, unknown>;
    let body: unknown;
    if (o.api === 'chat') {
      body = {
        id: o.id,
        object: 'chat.completion',
        created: o.created,
        model: o.model,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: toolCall ? null : text,
              reasoning_content: thinking > 0 ? reasoning : null,
              tool_calls: toolCalls,
            },
            logprobs: null,
            ...finish,
          },
        ],
        usage,
      };
    } else if (o.api === 'completions') {
      body = {
        id: o.id,
        object: 'text_completion',
        created: o.created,
        model: o.model,
        choices: [{ index: 0, text, logprobs: null, ...finish }],
        usage,
      };
    } else {
      body = {
        text,
        meta_info: {
          id: o.id,
          finish_reason: JSON.parse(this.sglangFinish()) as unknown,
          prompt_tokens: o.promptTokens,
          completion_tokens: this.generated,
          cached_tokens: o.cachedTokens,
        },
      };
    }
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (o.echoRequestId) headers['x-request-id'] = o.echoRequestId;
    this.noteFirstToken();
    if (o.truth) {
      const ns = this.o.clock.nowNs().toString();
      o.truth.firstTokenNs = ns;
      if (o.reasoningTokens > 0 && this.generated > thinking) o.truth.firstContentNs = ns;
      o.truth.chunks.push([ns, this.generated]);
    }
    this.res.writeHead(200, headers);
    this.res.end(JSON.stringify(body));
    this.finish(o.finishReason);
  }

  private finish(reason: string): void {
    this.finished = true;
    this.endTruth(reason);
  }

  private endTruth(reason: string): void {
    const truth = this.o.truth;
    if (truth) {
      truth.endNs = this.o.clock.nowNs().toString();
      truth.completionTokens = this.generated;
      truth.finishReason = reason;
      if (this.o.reasoningTokens > 0) truth.reasoningTokens = this.reasoningSoFar();
    }
    this.o.onEnd?.(truth);
  }
}

/** A streamed tool call's delta: the first carries its id, type and name (vLLM's and OpenAI's shape), later ones the arguments. */
function toolDelta(first: boolean, name: string, id: string, args: string): string {
  const head = first ? `"id":"call_${id}","type":"function",` : '';
  const fn = first ? `{"name":${JSON.stringify(name)},"arguments":"${args}"}` : `{"arguments":"${args}"}`;
  return `"tool_calls":[{"index":0,${head}"function":${fn}}]`;
}
