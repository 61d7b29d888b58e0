import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { bytePairPieces } from './byte-pair-vocab.js';

/**
 * A stand-in for llama.cpp's llama-server, written from its tools/server source (server.cpp / server-context.cpp /
 * server-task.cpp / server-http.cpp):
 * - N slots and a FIFO queue; a streamed request gets NO headers until its first result exists (the handler waits
 *   for the first task result before it answers), so a queued request hears nothing for the whole wait;
 * - errors before the first token are a plain HTTP error: `{"error":{"code":400,"message":"request (N tokens)
 *   exceeds the available context size (M tokens), try increasing it","type":"exceed_context_size_error",
 *   "n_prompt_tokens":N,"n_ctx":M}}` when the prompt does not fit the slot (n_tokens >= n_ctx);
 * - chat stream: a role-only chunk, one chunk per token, a finish chunk with `delta: {}`, then (include_usage)
 *   a `choices: []` chunk with usage and `timings`, then `data: [DONE]`; completions carry usage on the last
 *   choice chunk;
 * - /tokenize {content, add_special, parse_special, with_pieces} -> {tokens}, /detokenize {tokens} -> {content},
 *   /apply-template {messages} -> {prompt}, /health -> {status: ok}, /props (n_ctx, total_slots), /slots;
 * - /metrics: HTTP 501 not_supported_error unless started with --metrics (`metrics`), then its llamacpp:* page, which
 *   has no prefix-cache counter (the slot's reused prompt shows only per response, in timings.cache_n);
 * - announces `Connection: keep-alive` yet closes the socket just after each streamed response.
 * Its tokenizer is one token per whitespace-separated word (BOS with add_special), so counts are exact; with
 * `vocab: 'byte-pairs'` it is a small byte-level BPE vocabulary instead (byte-pair-vocab.ts), where every filler word
 * is several tokens.
 */
export interface LlamaCppLikeOptions {
  slots?: number;
  /** Per-slot context (llama.cpp's n_ctx per slot). */
  nCtx?: number;
  /** Time between two tokens of one slot (tokens are produced in steps of about 1 ms, or of this when longer). */
  tokenIntervalMs?: number;
  /** Close the socket this long after a streamed response ends (0: at once); a request in between dies. */
  closeDelayMs?: number;
  /** Keep sockets open after streams (a well-behaved server, for comparison). */
  keepAliveAfterStream?: boolean;
  model?: string;
  /** Serve /metrics as llama-server --metrics does (else 501, as without the flag). */
  metrics?: boolean;
  /** A fault on one control endpoint (a gateway in front of the server, a stuck handler), for the fault matrix. */
  controlFault?: ControlFault;
  /** 'words' (default): one token per word; 'byte-pairs': a small byte-level BPE vocabulary (byte-pair-vocab.ts). */
  vocab?: 'words' | 'byte-pairs';
  /**
   * Tokens each slot makes per step however late the step runs, as llama.cpp's decode loop does (one per slot per
   * llama_decode); default: as many as the clock says are due, so a late timer catches up.
   */
  stepTokens?: number;
  /**
   * Events a client finds in each network read: a slot's token events are written this many at a time, as a socket
   * read late at capacity delivers them (default 1: each step's events in one write).
   */
  eventsPerWrite?: number;
  /**
   * Built from a source tarball or `git archive`: cmake/build-info.cmake keeps build 0 and commit "unknown", so
   * build_info in /props and every chunk's system_fingerprint read "b0-unknown" (common.cpp llama_build_info).
   */
  noGitBuild?: boolean;
}

/**
 * How a control endpoint misbehaves: `html` a login page with 200 (a gateway that routes only /v1), `hang` reads the
 * request and never answers, `endless-line` 200 JSON headers then one line that never ends. `onlyHistory`: only
 * for message lists that hold an assistant turn (a multi-turn history count), so calibration still works.
 */
export interface ControlFault {
  path: '/tokenize' | '/apply-template';
  mode: 'html' | 'hang' | 'endless-line';
  onlyHistory?: boolean;
}

export interface LlamaCppLikeServer {
  url: string;
  /** x-request-id of every completion request that reached a handler. */
  requestTags: string[];
  /** Prompt tokens its slot reused (the response's timings.cache_n), by x-request-id, once a slot took it. */
  reusedByTag: Map<string, number>;
  /** Completion requests the server started generating for (a slot took them). */
  started: number;
  /** Sockets the server closed after a streamed response. */
  closedAfterStream: number;
  /** Requests that arrived on a socket the server was closing, and died with it (the client's race). */
  lostOnClosingSocket: number;
  /** Control calls that met the configured fault. */
  faulted: number;
  /** Resolves when the first control call meets the configured fault. */
  firstFault: Promise<void>;
  /** Sockets open now (0 after every client went away). */
  openSockets(): number;
  close(): Promise<void>;
}

interface Job {
  api: 'chat' | 'completions';
  /** The prompt's tokens, BOS first: the slot it runs on keeps them for the next prompt's reuse. */
  tokens: number[];
  nPrompt: number;
  /** Prompt tokens reused from the slot's previous prompt (longest common prefix, the last token always evaluated). */
  cacheN: number;
  slot: number;
  maxTokens: number;
  includeUsage: boolean;
  stream: boolean;
  res: ServerResponse;
  req: IncomingMessage;
  id: string;
  emitted: number;
  budget: number;
  startedAt: number;
  /** When its first token was made: llama.cpp's predicted_ms runs from there (t_start_generation). */
  firstAt: number;
  /** Token events made but not yet written (eventsPerWrite). */
  pending: string[];
  gone: boolean;
}

const BOS = 1;
const TEMPLATE_HEAD = '<|im_start|>user ';
const TEMPLATE_TAIL = ' <|im_end|> <|im_start|>assistant ';

function words(text: string): string[] {
  return text.split(/\s+/).filter(Boolean);
}

function wordId(word: string): number {
  let h = 2166136261;
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 16777619);
  return 100 + ((h >>> 0) % 31_000);
}

function applyTemplate(messages: Array<{ content?: unknown }>): string {
  return messages.map((m) => `${TEMPLATE_HEAD}${String(m.content ?? '')}${TEMPLATE_TAIL}`).join('');
}

function errorJson(code: number, message: string, type: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ error: { code, message, type, ...extra } });
}

async function readBody(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text;
}

/** The body, once: a fault check may have read it already. */
async function bodyOf(req: IncomingMessage): Promise<string> {
  const read = (req as { bodyText?: string }).bodyText;
  return read ?? readBody(req);
}

function misbehave(fault: ControlFault, res: ServerResponse): void {
  if (fault.mode === 'hang') return;
  if (fault.mode === 'html') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>Please sign in</body></html>\n');
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"tokens":[');
  const piece = Buffer.alloc(64 * 1024, '1,');
  // Writes until the client goes, honouring back-pressure: an answer that never ends.
  const next = (): void => {
    while (!res.destroyed) {
      if (!res.write(piece)) {
        res.once('drain', next);
        return;
      }
    }
  };
  next();
}

/** Starts the stand-in on 127.0.0.1 at a free port. */
export async function startLlamaCppLike(options: LlamaCppLikeOptions = {}): Promise<LlamaCppLikeServer> {
  const slots = options.slots ?? 4;
  const nCtx = options.nCtx ?? 4096;
  const interval = options.tokenIntervalMs ?? 0.3;
  const closeDelay = options.closeDelayMs ?? 20;
  const model = options.model ?? 'llama-like.gguf';
  const fingerprint = options.noGitBuild ? 'b0-unknown' : 'b6000-fake';
  const vocab = new Map<number, string>();
  const queue: Job[] = [];
  const active: Job[] = [];
  // Each slot's last prompt: llama.cpp reuses its longest common prefix with the next prompt the slot takes.
  const slotPrompts: number[][] = Array.from({ length: slots }, () => []);
  const busySlots = new Set<number>();
  const commonPrefix = (a: number[], b: number[]): number => {
    let n = 0;
    while (n < a.length && n < b.length && a[n] === b[n]) n++;
    return n;
  };
  // As llama.cpp's slot choice by prompt similarity: the free slot sharing the longest prefix with the prompt.
  const takeSlot = (job: Job): void => {
    let best = -1;
    let bestLcp = -1;
    for (let s = 0; s < slotPrompts.length; s++) {
      if (busySlots.has(s)) continue;
      const lcp = commonPrefix(slotPrompts[s] as number[], job.tokens);
      if (lcp > bestLcp) [best, bestLcp] = [s, lcp];
    }
    job.slot = best;
    job.cacheN = Math.max(0, Math.min(bestLcp, job.nPrompt - 1));
    busySlots.add(best);
    slotPrompts[best] = job.tokens;
  };
  const leaveSlot = (job: Job): void => {
    busySlots.delete(job.slot);
  };
  const requestTags: string[] = [];
  const reusedByTag = new Map<string, number>();
  const state = { started: 0, closedAfterStream: 0, lostOnClosingSocket: 0, faulted: 0 };
  let faultSeen: () => void = () => undefined;
  const firstFault = new Promise<void>((resolve) => (faultSeen = resolve));
  const totals = { prompt: 0, predicted: 0, decodes: 0 };
  const sockets = new Set<Socket>();
  const closing = new WeakSet<object>();
  const closeTimers = new Set<NodeJS.Timeout>();
  let stepTimer: NodeJS.Timeout | null = null;
  let nextId = 0;

  const pieces = options.vocab === 'byte-pairs' ? bytePairPieces : words;
  const tokenize = (text: string, addSpecial: boolean): number[] => {
    const ids = pieces(text).map((w) => {
      const id = wordId(w);
      vocab.set(id, w);
      return id;
    });
    return addSpecial ? [BOS, ...ids] : ids;
  };

  const send = (res: ServerResponse, status: number, body: string): void => {
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      server: 'llama.cpp',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  };

  const chunk = (job: Job, fields: Record<string, unknown>): string => {
    const base =
      job.api === 'chat'
        ? { ...fields, created: Math.floor(Date.now() / 1000), id: job.id, model, system_fingerprint: fingerprint }
        : { ...fields, created: Math.floor(Date.now() / 1000), model, system_fingerprint: fingerprint };
    const obj =
      job.api === 'chat'
        ? { ...base, object: 'chat.completion.chunk' }
        : { ...base, object: 'text_completion', id: job.id };
    return `data: ${JSON.stringify(obj)}\n\n`;
  };

  const usage = (job: Job): Record<string, unknown> => ({
    completion_tokens: job.emitted,
    prompt_tokens: job.nPrompt,
    total_tokens: job.emitted + job.nPrompt,
    prompt_tokens_details: { cached_tokens: job.cacheN },
  });

  const timings = (job: Job): Record<string, unknown> => {
    const ms = Math.max(0.001, performance.now() - (job.firstAt || job.startedAt));
    return {
      cache_n: job.cacheN,
      prompt_n: job.nPrompt - job.cacheN,
      prompt_ms: 1,
      prompt_per_token_ms: 1 / Math.max(1, job.nPrompt - job.cacheN),
      prompt_per_second: (job.nPrompt - job.cacheN) * 1000,
      predicted_n: job.emitted,
      predicted_ms: ms,
      predicted_per_token_ms: ms / Math.max(1, job.emitted),
      predicted_per_second: (job.emitted * 1000) / ms,
    };
  };

  const startStream = (job: Job): void => {
    // The handler answers only now, with the first result: headers and the first chunk together.
    job.res.writeHead(200, {
      'content-type': 'text/event-stream',
      server: 'llama.cpp',
      connection: 'keep-alive',
      'keep-alive': 'timeout=5, max=100',
      'x-accel-buffering': 'no',
    });
    if (job.api === 'chat') {
      job.res.write(
        chunk(job, { choices: [{ finish_reason: null, index: 0, delta: { role: 'assistant', content: null } }] }),
      );
    }
  };

  const tokenText = (job: Job): string => ` t${job.emitted}`;

  const finishJob = (job: Job): void => {
    const out: string[] = [];
    if (job.api === 'chat') {
      out.push(chunk(job, { choices: [{ finish_reason: 'length', index: 0, delta: {} }] }));
      if (job.includeUsage) out.push(chunk(job, { choices: [], usage: usage(job), timings: timings(job) }));
    } else {
      out.push(
        chunk(job, {
          choices: [{ text: '', index: 0, logprobs: null, finish_reason: 'length' }],
          usage: usage(job),
          timings: timings(job),
        }),
      );
    }
    out.push('data: [DONE]\n\n');
    const socket = job.req.socket;
    job.res.end(out.join(''), () => {
      if (options.keepAliveAfterStream) return;
      // llama.cpp announced keep-alive but the connection ends here. Until the close lands, a request written
      // onto this socket is lost with it: the worst case of the race, made certain so tests do not hang on luck.
      closing.add(socket);
      const close = (): void => {
        if (!socket.destroyed) {
          state.closedAfterStream++;
          socket.destroy();
        }
      };
      if (closeDelay > 0) {
        const t = setTimeout(() => {
          closeTimers.delete(t);
          close();
        }, closeDelay);
        closeTimers.add(t);
      } else close();
    });
  };

  const finishNonStream = (job: Job): void => {
    const text = Array.from({ length: job.emitted }, (_, i) => ` t${i + 1}`).join('');
    const created = Math.floor(Date.now() / 1000);
    const body =
      job.api === 'chat'
        ? {
            choices: [{ finish_reason: 'length', index: 0, message: { role: 'assistant', content: text } }],
            created,
            model,
            system_fingerprint: fingerprint,
            object: 'chat.completion',
            usage: usage(job),
            id: job.id,
            timings: timings(job),
          }
        : {
            choices: [{ text, index: 0, logprobs: null, finish_reason: 'length' }],
            created,
            model,
            system_fingerprint: fingerprint,
            object: 'text_completion',
            usage: usage(job),
            id: job.id,
            timings: timings(job),
          };
    send(job.res, 200, JSON.stringify(body));
  };

  const admit = (): void => {
    while (active.length < slots && queue.length > 0) {
      const job = queue.shift() as Job;
      if (job.gone) continue;
      if (job.nPrompt >= nCtx) {
        send(
          job.res,
          400,
          errorJson(
            400,
            `request (${job.nPrompt} tokens) exceeds the available context size (${nCtx} tokens), try increasing it`,
            'exceed_context_size_error',
            { n_prompt_tokens: job.nPrompt, n_ctx: nCtx },
          ),
        );
        continue;
      }
      state.started++;
      takeSlot(job);
      const tag = job.req.headers['x-request-id'];
      if (typeof tag === 'string') reusedByTag.set(tag, job.cacheN);
      totals.prompt += job.nPrompt - job.cacheN;
      job.startedAt = performance.now();
      // With the context full, generation stops early (finish_reason "length", truncated) as llama.cpp does.
      job.budget = Math.min(job.maxTokens, nCtx - job.nPrompt);
      active.push(job);
    }
    if (active.length > 0 && !stepTimer) scheduleStep(performance.now());
  };

  const scheduleStep = (last: number): void => {
    // A step every ms, or every token interval when that is longer (a slower model): one token per slot a step.
    stepTimer = setTimeout(() => step(last), Math.max(1, interval));
  };

  const step = (last: number): void => {
    stepTimer = null;
    const now = performance.now();
    const perSlot = options.stepTokens ?? Math.max(1, Math.floor((now - last) / interval));
    totals.decodes++;
    for (let i = active.length - 1; i >= 0; i--) {
      const job = active[i] as Job;
      if (job.gone) {
        active.splice(i, 1);
        leaveSlot(job);
        continue;
      }
      const parts = job.pending;
      const n = Math.min(perSlot, job.budget - job.emitted);
      for (let k = 0; k < n; k++) {
        if (job.emitted === 0 && job.stream) startStream(job);
        if (job.emitted === 0) job.firstAt = performance.now();
        job.emitted++;
        totals.predicted++;
        if (!job.stream) continue;
        parts.push(
          job.api === 'chat'
            ? chunk(job, { choices: [{ finish_reason: null, index: 0, delta: { content: tokenText(job) } }] })
            : chunk(job, { choices: [{ text: tokenText(job), index: 0, logprobs: null, finish_reason: null }] }),
        );
      }
      const done = job.emitted >= job.budget;
      if (parts.length > 0 && (done || parts.length >= (options.eventsPerWrite ?? 1))) {
        job.res.write(parts.join(''));
        job.pending = [];
      }
      if (job.emitted >= job.budget) {
        active.splice(i, 1);
        leaveSlot(job);
        if (job.stream) {
          if (job.emitted === 0) startStream(job);
          finishJob(job);
        } else finishNonStream(job);
      }
    }
    admit();
    if (active.length > 0 && !stepTimer) scheduleStep(now);
  };

  const completion = async (api: 'chat' | 'completions', req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const tag = req.headers['x-request-id'];
    if (typeof tag === 'string') requestTags.push(tag);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(await readBody(req)) as Record<string, unknown>;
    } catch (error) {
      send(res, 500, errorJson(500, String(error), 'server_error'));
      return;
    }
    const prompt =
      api === 'chat' ? applyTemplate((body.messages as Array<{ content?: unknown }>) ?? []) : String(body.prompt ?? '');
    const maxTokens = Number(body.max_tokens ?? body.n_predict ?? 16);
    const streamOptions = body.stream_options as { include_usage?: unknown } | undefined;
    const tokens = tokenize(prompt, true);
    const job: Job = {
      api,
      tokens,
      nPrompt: tokens.length,
      cacheN: 0,
      slot: -1,
      maxTokens: Number.isFinite(maxTokens) && maxTokens > 0 ? maxTokens : 16,
      includeUsage: streamOptions?.include_usage === true,
      stream: body.stream === true,
      res,
      req,
      id: `chatcmpl-${++nextId}`,
      emitted: 0,
      budget: 0,
      startedAt: 0,
      firstAt: 0,
      pending: [],
      gone: false,
    };
    res.on('close', () => {
      job.gone = true;
    });
    queue.push(job);
    admit();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && (path === '/health' || path === '/v1/health')) {
      send(res, 200, JSON.stringify({ status: 'ok' }));
      return;
    }
    if (req.method === 'GET' && (path === '/v1/models' || path === '/models')) {
      send(
        res,
        200,
        JSON.stringify({
          object: 'list',
          data: [
            {
              id: model,
              object: 'model',
              created: Math.floor(Date.now() / 1000),
              owned_by: 'llamacpp',
              meta: { n_ctx_train: nCtx },
            },
          ],
        }),
      );
      return;
    }
    if (req.method === 'GET' && path === '/props') {
      send(
        res,
        200,
        JSON.stringify({
          default_generation_settings: { n_ctx: nCtx, params: { n_predict: -1, temperature: 0.8 } },
          total_slots: slots,
          model_alias: '',
          model_path: `/models/${model}`,
          modalities: { vision: false, audio: false },
          endpoint_slots: true,
          endpoint_props: false,
          endpoint_metrics: false,
          build_info: fingerprint,
        }),
      );
      return;
    }
    if (req.method === 'GET' && path === '/metrics') {
      if (!options.metrics) {
        const message = 'This server does not support metrics endpoint. Start it with `--metrics`';
        send(res, 501, errorJson(501, message, 'not_supported_error'));
        return;
      }
      const page = [
        '# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.',
        '# TYPE llamacpp:prompt_tokens_total counter',
        `llamacpp:prompt_tokens_total ${totals.prompt}`,
        '# HELP llamacpp:tokens_predicted_total Number of generation tokens processed.',
        '# TYPE llamacpp:tokens_predicted_total counter',
        `llamacpp:tokens_predicted_total ${totals.predicted}`,
        '# HELP llamacpp:n_decode_total Total number of llama_decode() calls',
        '# TYPE llamacpp:n_decode_total counter',
        `llamacpp:n_decode_total ${totals.decodes}`,
        '# HELP llamacpp:requests_processing Number of requests processing.',
        '# TYPE llamacpp:requests_processing gauge',
        `llamacpp:requests_processing ${active.length}`,
        '# HELP llamacpp:requests_deferred Number of requests deferred.',
        '# TYPE llamacpp:requests_deferred gauge',
        `llamacpp:requests_deferred ${queue.length}`,
        '',
      ].join('\n');
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4', server: 'llama.cpp' });
      res.end(page);
      return;
    }
    if (req.method === 'GET' && path === '/slots') {
      send(
        res,
        200,
        JSON.stringify(
          Array.from({ length: slots }, (_, id) => ({ id, n_ctx: nCtx, is_processing: id < active.length })),
        ),
      );
      return;
    }
    const fault = options.controlFault;
    if (req.method === 'POST' && fault && path === fault.path) {
      const text = await readBody(req);
      const history = /"role"\s*:\s*"assistant"/.test(text);
      if (!fault.onlyHistory || history) {
        state.faulted++;
        faultSeen();
        misbehave(fault, res);
        return;
      }
      (req as { bodyText?: string }).bodyText = text;
    }
    if (req.method === 'POST' && path === '/tokenize') {
      const body = JSON.parse((await bodyOf(req)) || '{}') as Record<string, unknown>;
      let tokens: unknown[] = [];
      if (body.content !== undefined) {
        const ids = tokenize(String(body.content), body.add_special === true);
        tokens =
          body.with_pieces === true
            ? ids.map((id) => ({ id, piece: id === BOS ? '<s>' : (vocab.get(id) ?? '') }))
            : ids;
      }
      send(res, 200, JSON.stringify({ tokens }));
      return;
    }
    if (req.method === 'POST' && path === '/detokenize') {
      const body = JSON.parse((await readBody(req)) || '{}') as { tokens?: number[] };
      const joiner = options.vocab === 'byte-pairs' ? '' : ' ';
      const content = (body.tokens ?? []).map((id) => (id === BOS ? '' : (vocab.get(id) ?? ''))).join(joiner);
      send(res, 200, JSON.stringify({ content }));
      return;
    }
    if (req.method === 'POST' && path === '/apply-template') {
      const body = JSON.parse((await bodyOf(req)) || '{}') as { messages?: Array<{ content?: unknown }> };
      send(res, 200, JSON.stringify({ prompt: applyTemplate(body.messages ?? []) }));
      return;
    }
    if (req.method === 'POST' && (path === '/v1/chat/completions' || path === '/chat/completions')) {
      await completion('chat', req, res);
      return;
    }
    if (req.method === 'POST' && (path === '/v1/completions' || path === '/completions')) {
      await completion('completions', req, res);
      return;
    }
    send(res, 404, JSON.stringify({ error: { message: 'File Not Found', type: 'not_found_error', code: 404 } }));
  };

  const server: Server = createServer((req, res) => {
    if (closing.has(req.socket)) {
      state.lostOnClosingSocket++;
      state.closedAfterStream++;
      req.socket.destroy();
      return;
    }
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, errorJson(500, String(error), 'server_error'));
      else res.destroy();
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requestTags,
    reusedByTag,
    get faulted() {
      return state.faulted;
    },
    firstFault,
    openSockets: () => sockets.size,
    get started() {
      return state.started;
    },
    get closedAfterStream() {
      return state.closedAfterStream;
    },
    get lostOnClosingSocket() {
      return state.lostOnClosingSocket;
    },
    close: async () => {
      if (stepTimer) clearTimeout(stepTimer);
      for (const t of closeTimers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
