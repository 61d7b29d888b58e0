import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeGpu, writeGpuState } from './fake-gpu.js';
import { foldFaults, type FaultSet, type SimFault } from './faults.js';
import { PrefixCache, PREFIX_BLOCK } from './prefix-cache.js';
import { DEFAULT_PROFILE_NAME, loadProfile, type SimProfile } from './profile.js';
import { Histogram, sglangMetrics, vllmMetrics, type MetricsSnapshot } from './prometheus.js';
import { Responder, type ApiKind } from './responder.js';
import { createRng } from '../rng.js';
import { Scheduler, type Seq } from './scheduler.js';
import { realSimClock, type SimClock, type SimTimer } from './sim-clock.js';
import {
  loadLines,
  MIMIC_VERSION,
  oomLines,
  readyLines,
  simBanner,
  type Mimic,
  type StartupContext,
} from './startup-log.js';
import {
  countChatTokens,
  countTokens,
  OUTPUT_WORDS,
  tokenizeChat,
  tokenizeCompletion,
  type ChatMessage,
} from './tokenizer.js';
import { TruthLog, type TruthRecord } from './truth-log.js';

/** How to start a simulated engine (all optional; defaults: vllm mimic, default profile, free port). */
export interface SimOptions {
  host?: string;
  /** 0 = a free port. */
  port?: number;
  /** Served model name. */
  model?: string;
  mimic?: Mimic;
  profile?: SimProfile;
  seed?: number;
  /** Truth log: one JSON line per request with server-side timestamps. */
  truthFile?: string;
  /** Fake GPU state file for the fake nvidia-smi. */
  gpuStateFile?: string;
  faults?: SimFault[];
  /** Receives the engine's log lines (start-up, ready line, crash). */
  log?: (line: string) => void;
  /** crash-after fault: called once the server has crashed (the CLI exits the process here). */
  onCrash?: () => void;
  /** How often the fake GPU advances and its state file is rewritten (ms); default 200. */
  gpuTickMs?: number;
  /** Time and timers of the engine (steps, stalls, GPU ticks, slow-start, truth log); default the real clock. */
  clock?: SimClock;
}

/** What the engine holds right now, and what it has finished. */
export interface SimEngineCounts {
  running: number;
  waiting: number;
  finished: number;
}

/** A running simulated engine. */
export interface SimServer {
  /** http://HOST:PORT, without /v1. */
  url: string;
  port: number;
  /** The engine's queues now: lets a test step a virtual clock once every expected request has arrived. */
  engineCounts(): SimEngineCounts;
  /** Stops the engine: open streams are cut, the truth log is flushed. Idempotent. */
  close(): Promise<void>;
}

/** Thrown by startSimServer for the oom-on-start fault; the engine's OOM line was logged. */
export class SimOomError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SimOomError';
  }
}

/** Default served model name. */
export const DEFAULT_SIM_MODEL = 'servebench/sim-llama-8b';

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type = 'BadRequestError',
  ) {
    super(message);
  }
}

const MAX_BODY = 64 * 1024 * 1024;

function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (b: Buffer) => {
      size += b.length;
      if (size > MAX_BODY) {
        reject(new HttpError(413, 'request body too large'));
        req.destroy();
        return;
      }
      parts.push(b);
    });
    req.on('end', () => {
      if (size === 0) return resolve({});
      try {
        resolve(JSON.parse(Buffer.concat(parts).toString('utf8')));
      } catch {
        reject(new HttpError(400, 'request body is not valid JSON'));
      }
    });
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function errorBody(status: number, message: string, type: string): unknown {
  return { error: { message, type, param: null, code: status } };
}

function optInt(body: Record<string, unknown>, key: string, min: number): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) {
    throw new HttpError(400, `${key} must be an integer >= ${min}, got ${JSON.stringify(v)}`);
  }
  return v;
}

interface Parsed {
  api: ApiKind;
  stream: boolean;
  promptTokens: number;
  ids: number[] | null;
  maxTokens: number;
  minTokens: number;
  ignoreEos: boolean;
  includeUsage: boolean;
  continuousUsage: boolean;
}

/** Starts the simulated engine and resolves once it answers requests (after its ready line). */
export async function startSimServer(options: SimOptions = {}): Promise<SimServer> {
  const profile = options.profile ?? loadProfile(DEFAULT_PROFILE_NAME);
  const mimic: Mimic = options.mimic ?? 'vllm';
  const model = options.model ?? DEFAULT_SIM_MODEL;
  const host = options.host ?? '127.0.0.1';
  const seed = options.seed ?? 0;
  const faults: FaultSet = foldFaults(options.faults);
  const log = options.log ?? (() => undefined);
  const clock = options.clock ?? realSimClock;
  const ctx: StartupContext = { mimic, model, host, port: options.port ?? 0, profile, pid: process.pid };

  log(simBanner(ctx));
  const load = loadLines(ctx);
  // A real OOM happens while the KV cache is sized, so its lines stop before the cache size line.
  const kvLine = load.findIndex((l) => /KV cache size|KV Cache is allocated/.test(l));
  for (const line of faults.oomOnStart && kvLine >= 0 ? load.slice(0, kvLine) : load) log(line);
  if (faults.oomOnStart) {
    const lines = oomLines(ctx);
    for (const line of lines) log(line);
    throw new SimOomError(lines[lines.length - 1] ?? 'out of memory');
  }

  const eosRng = createRng(seed ^ 0x9e3779b9);
  const faultRng = createRng(seed ^ 0x5f3759df);
  const gpu = new FakeGpu(profile, clock.nowMs());
  const scheduler = new Scheduler(profile, createRng(seed ^ 0x2545f491), gpu, clock);
  const prefixCache = profile.prefixCaching ? new PrefixCache(Math.floor(profile.kvCacheTokens / PREFIX_BLOCK)) : null;
  const truthLog = options.truthFile ? new TruthLog(options.truthFile) : null;
  const ttft = new Histogram();
  const startedMs = clock.nowMs();
  const created = Math.floor(Date.now() / 1000);
  let requestCounter = 0;
  let finishedRequests = 0;
  let crashed = false;
  let closed = false;
  let genThroughput = 0;
  let lastGenTokens = 0;
  let lastTickMs = startedMs;

  const server: Server = createServer({ keepAliveTimeout: 60_000, noDelay: true, requestTimeout: 0 });

  const crash = (): void => {
    if (crashed || closed) return;
    crashed = true;
    log(
      `(EngineCore_DP0 pid=${process.pid}) ERROR servebench sim: crash-after=${faults.crashAfter ?? 0} fault: the engine dies now`,
    );
    scheduler.stop();
    server.close();
    server.closeAllConnections();
    stopTimers();
    truthLog?.flush();
    options.onCrash?.();
  };

  const onRequestEnd = (record: TruthRecord | null): void => {
    if (record) truthLog?.write(record);
  };

  const stampEnergy = (record: TruthRecord, seq: Seq): void => {
    const prefill = seq.prefillJ ?? 0;
    record.energyJ = Math.round((prefill + (seq.decodeJ ?? 0)) * 1e6) / 1e6;
    record.prefillEnergyJ = Math.round(prefill * 1e6) / 1e6;
  };

  const countFinished = (res: ServerResponse): void => {
    res.once('finish', () => {
      finishedRequests++;
      if (faults.crashAfter !== null && finishedRequests >= faults.crashAfter) setImmediate(crash);
    });
  };

  const snapshot = (): MetricsSnapshot => ({
    model,
    running: scheduler.running.length,
    waiting: scheduler.waiting.length,
    kvUsage: scheduler.kvUsage,
    kvUsedTokens: scheduler.kvUsed,
    stats: scheduler.stats,
    ttft,
    genThroughput,
  });

  const modelCard = (): unknown => ({
    object: 'list',
    data: [
      {
        id: model,
        object: 'model',
        created,
        owned_by: mimic === 'openai' ? 'system' : mimic,
        root: model,
        parent: null,
        max_model_len: profile.maxModelLen,
      },
    ],
  });

  function checkModel(body: Record<string, unknown>): void {
    // SGLang serves whatever name is asked for; vLLM and OpenAI refuse an unknown model.
    if (mimic === 'sglang' || body.model === undefined || body.model === model) return;
    throw new HttpError(404, `The model \`${String(body.model)}\` does not exist.`, 'NotFoundError');
  }

  function parseOpenAi(api: 'chat' | 'completions', body: Record<string, unknown>): Parsed {
    checkModel(body);
    let promptTokens: number;
    let ids: number[] | null = null;
    if (api === 'chat') {
      const messages = body.messages;
      if (
        !Array.isArray(messages) ||
        messages.length === 0 ||
        !messages.every((m) => m && typeof m === 'object' && typeof (m as ChatMessage).role === 'string')
      ) {
        throw new HttpError(400, "'messages' must be a non-empty list of {role, content}");
      }
      if (prefixCache) {
        ids = tokenizeChat(messages as ChatMessage[]);
        promptTokens = ids.length;
      } else {
        promptTokens = countChatTokens(messages as ChatMessage[]);
      }
    } else {
      let prompt = body.prompt;
      if (Array.isArray(prompt) && prompt.length === 1 && (typeof prompt[0] === 'string' || Array.isArray(prompt[0])))
        prompt = prompt[0];
      if (typeof prompt === 'string') {
        if (prefixCache) {
          ids = tokenizeCompletion(prompt);
          promptTokens = ids.length;
        } else {
          promptTokens = countTokens(prompt) + 1;
        }
      } else if (Array.isArray(prompt) && prompt.length > 0 && prompt.every((t) => Number.isInteger(t))) {
        ids = prompt as number[];
        promptTokens = ids.length;
      } else {
        throw new HttpError(400, "'prompt' must be a string or a list of token ids (one prompt per request)");
      }
    }
    const maxTokensReq = optInt(body, 'max_completion_tokens', 1) ?? optInt(body, 'max_tokens', 1);
    return finishParse(
      api,
      body,
      promptTokens,
      ids,
      maxTokensReq,
      optInt(body, 'min_tokens', 0) ?? 0,
      body.ignore_eos === true,
    );
  }

  function finishParse(
    api: ApiKind,
    body: Record<string, unknown>,
    promptTokens: number,
    ids: number[] | null,
    maxTokensReq: number | undefined,
    minTokens: number,
    ignoreEos: boolean,
  ): Parsed {
    const room = profile.maxModelLen - promptTokens;
    if (room < 1 || (maxTokensReq !== undefined && maxTokensReq > room)) {
      const asked = promptTokens + (maxTokensReq ?? 1);
      throw new HttpError(
        400,
        `This model's maximum context length is ${profile.maxModelLen} tokens. However, you requested ${asked} tokens (${promptTokens} in the messages, ${maxTokensReq ?? 1} in the completion). Please reduce the length of the messages or completion.`,
      );
    }
    const maxTokens = maxTokensReq ?? room;
    if (minTokens > maxTokens)
      throw new HttpError(400, `min_tokens (${minTokens}) must be less than or equal to max_tokens (${maxTokens})`);
    const so = body.stream_options;
    const streamOptions = so && typeof so === 'object' ? (so as Record<string, unknown>) : {};
    return {
      api,
      stream: body.stream === true,
      promptTokens,
      ids,
      maxTokens,
      minTokens,
      ignoreEos,
      includeUsage: streamOptions.include_usage === true,
      continuousUsage: streamOptions.continuous_usage_stats === true,
    };
  }

  function parseGenerate(body: Record<string, unknown>): Parsed {
    let ids: number[] | null = null;
    let promptTokens: number;
    if (typeof body.text === 'string') {
      ids = tokenizeCompletion(body.text);
      promptTokens = ids.length;
    } else if (Array.isArray(body.input_ids) && body.input_ids.every((t) => Number.isInteger(t))) {
      ids = body.input_ids as number[];
      promptTokens = ids.length;
    } else {
      throw new HttpError(400, "/generate needs 'text' (a string) or 'input_ids' (token ids)");
    }
    const sp =
      body.sampling_params && typeof body.sampling_params === 'object'
        ? (body.sampling_params as Record<string, unknown>)
        : {};
    const maxNew = optInt(sp, 'max_new_tokens', 1) ?? 128;
    return finishParse(
      'generate',
      body,
      promptTokens,
      prefixCache ? ids : null,
      maxNew,
      optInt(sp, 'min_new_tokens', 0) ?? 0,
      sp.ignore_eos === true,
    );
  }

  function handleGeneration(
    req: IncomingMessage,
    res: ServerResponse,
    parsed: Parsed,
    receivedNs: bigint,
    receivedMs: number,
  ): void {
    const n = requestCounter++;
    const requestIdHeader = req.headers['x-request-id'];
    const requestId = typeof requestIdHeader === 'string' ? requestIdHeader : null;
    const truth: TruthRecord | null = truthLog
      ? {
          requestId,
          receivedNs: receivedNs.toString(),
          firstTokenNs: null,
          chunks: [],
          endNs: null,
          promptTokens: parsed.promptTokens,
          completionTokens: 0,
          finishReason: null,
        }
      : null;
    countFinished(res);
    if (faults.errorRate > 0 && faultRng() < faults.errorRate) {
      sendJson(res, 500, errorBody(500, 'simulated internal server error (error-rate fault)', 'InternalServerError'));
      if (truth) {
        truth.endNs = clock.nowNs().toString();
        truth.finishReason = 'http-500';
        onRequestEnd(truth);
      }
      return;
    }
    // Early EOS: a geometric draw of where the model would stop, after min_tokens.
    let target = parsed.maxTokens;
    if (!parsed.ignoreEos && profile.eosProb > 0) {
      const from = Math.max(parsed.minTokens, 1);
      const extra = profile.eosProb >= 1 ? 0 : Math.floor(Math.log(1 - eosRng()) / Math.log(1 - profile.eosProb));
      target = Math.min(parsed.maxTokens, from + extra);
    }
    const finishReason = target < parsed.maxTokens ? 'stop' : 'length';
    const half = Math.floor(target / 2);
    const midstream = parsed.stream && faults.midstreamErrorRate > 0 && faultRng() < faults.midstreamErrorRate;
    const malformed = parsed.stream && faults.malformedRate > 0 && faultRng() < faults.malformedRate;
    const cachedTokens = prefixCache && parsed.ids ? prefixCache.lookupAndInsert(parsed.ids) : 0;
    const idHex = n.toString(16).padStart(16, '0');
    const id =
      parsed.api === 'chat'
        ? `chatcmpl-sim${idHex}`
        : parsed.api === 'completions'
          ? `cmpl-sim${idHex}`
          : `sim${idHex}`;
    let seq: Seq | null = null;
    const responder = new Responder(res, {
      api: parsed.api,
      stream: parsed.stream,
      model,
      id,
      created,
      promptTokens: parsed.promptTokens,
      cachedTokens,
      target,
      finishReason,
      includeUsage: parsed.includeUsage,
      continuousUsage: parsed.continuousUsage,
      reasoningTokens: parsed.api === 'chat' ? profile.reasoningTokens : 0,
      wordOffset: (n * 7) % OUTPUT_WORDS.length,
      midstreamErrorAt: midstream ? half : -1,
      malformedAt: malformed ? half : -1,
      buffered: faults.buffered && parsed.stream,
      closeAfterStream: faults.closeAfterStream && parsed.stream,
      echoRequestId: requestId,
      truth,
      receivedMs,
      clock,
      onFirstToken: (ms) => ttft.observe(ms / 1000),
      onEnd: (record) => {
        if (record && seq) stampEnergy(record, seq);
        onRequestEnd(record);
      },
      abort: () => {
        if (seq) scheduler.cancel(seq);
      },
    });
    responder.start();
    seq = {
      promptTokens: parsed.promptTokens,
      cachedTokens,
      target,
      generated: 0,
      stallAt: faults.stallMs > 0 && target > 1 ? Math.max(1, half) : -1,
      stallMs: faults.stallMs,
      onTokens: (count, done, chunkTokens) => responder.onTokens(count, done, chunkTokens),
    };
    scheduler.submit(seq);
  }

  function health(res: ServerResponse): void {
    if (clock.nowMs() - startedMs < faults.slowStartMs) {
      sendJson(res, 503, errorBody(503, 'engine is still loading (slow-start fault)', 'ServiceUnavailableError'));
      return;
    }
    res.writeHead(200, { 'content-length': 0 });
    res.end();
  }

  function tokenizeRoute(body: Record<string, unknown>): unknown {
    checkModel(body);
    let ids: number[];
    if (Array.isArray(body.messages)) {
      const gen = body.add_generation_prompt !== false;
      ids = tokenizeChat(body.messages as ChatMessage[], gen);
    } else if (typeof body.prompt === 'string') {
      ids = tokenizeCompletion(body.prompt, body.add_special_tokens !== false);
    } else {
      throw new HttpError(400, "/tokenize needs 'prompt' (a string) or 'messages'");
    }
    return { count: ids.length, max_model_len: profile.maxModelLen, tokens: ids, token_strs: null };
  }

  type Route = (
    req: IncomingMessage,
    res: ServerResponse,
    receivedNs: bigint,
    receivedMs: number,
  ) => Promise<void> | void;
  const routes = new Map<string, Route>();
  const post = (
    path: string,
    fn: (body: Record<string, unknown>, req: IncomingMessage, res: ServerResponse, ns: bigint, ms: number) => void,
  ): void => {
    routes.set(`POST ${path}`, async (req, res, ns, ms) => {
      const body = await readBody(req);
      if (!body || typeof body !== 'object' || Array.isArray(body))
        throw new HttpError(400, 'request body must be a JSON object');
      fn(body as Record<string, unknown>, req, res, ns, ms);
    });
  };
  const get = (path: string, fn: (res: ServerResponse) => void): void => {
    routes.set(`GET ${path}`, (_req, res) => fn(res));
  };

  post('/v1/chat/completions', (body, req, res, ns, ms) =>
    handleGeneration(req, res, parseOpenAi('chat', body), ns, ms),
  );
  post('/v1/completions', (body, req, res, ns, ms) =>
    handleGeneration(req, res, parseOpenAi('completions', body), ns, ms),
  );
  get('/v1/models', (res) => sendJson(res, 200, modelCard()));
  if (mimic === 'vllm') {
    get('/health', health);
    get('/version', (res) => sendJson(res, 200, { version: MIMIC_VERSION.vllm }));
    get('/metrics', (res) => sendText(res, vllmMetrics(snapshot())));
    post('/tokenize', (body, _req, res) => sendJson(res, 200, tokenizeRoute(body)));
  } else if (mimic === 'sglang') {
    get('/health', health);
    get('/health_generate', health);
    const modelInfo = (res: ServerResponse): void =>
      sendJson(res, 200, {
        model_path: model,
        tokenizer_path: model,
        is_generation: true,
        preferred_sampling_params: null,
        weight_version: 'default',
      });
    get('/model_info', modelInfo);
    get('/get_model_info', modelInfo);
    const serverInfo = (res: ServerResponse): void =>
      sendJson(res, 200, {
        model_path: model,
        served_model_name: model,
        host,
        port: ctx.port,
        context_length: profile.maxModelLen,
        max_running_requests: profile.maxNumSeqs,
        max_total_num_tokens: profile.kvCacheTokens,
        dllm_algorithm: profile.blockSize > 0 ? 'LowConfidence' : null,
        dllm_algorithm_config:
          profile.blockSize > 0 ? { block_size: profile.blockSize, threshold: profile.threshold } : null,
        version: MIMIC_VERSION.sglang,
        internal_states: [{ last_gen_throughput: genThroughput }],
        simulated: true,
        sim_profile: profile.name,
      });
    get('/server_info', serverInfo);
    get('/get_server_info', serverInfo);
    get('/metrics', (res) => sendText(res, sglangMetrics(snapshot())));
    post('/generate', (body, req, res, ns, ms) => handleGeneration(req, res, parseGenerate(body), ns, ms));
  }

  function sendText(res: ServerResponse, text: string): void {
    res.writeHead(200, {
      'content-type': 'text/plain; version=0.0.4; charset=utf-8',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const receivedNs = clock.nowNs();
    const receivedMs = clock.nowMs();
    const q = req.url?.indexOf('?') ?? -1;
    const path = q >= 0 ? req.url!.slice(0, q) : (req.url ?? '/');
    const route = routes.get(`${req.method} ${path}`);
    if (!route) {
      // FastAPI's answers, as both engines give them.
      const known = routes.has(`GET ${path}`) || routes.has(`POST ${path}`);
      sendJson(res, known ? 405 : 404, { detail: known ? 'Method Not Allowed' : 'Not Found' });
      req.resume();
      return;
    }
    Promise.resolve()
      .then(() => route(req, res, receivedNs, receivedMs))
      .catch((error: unknown) => {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        if (error instanceof HttpError) sendJson(res, error.status, errorBody(error.status, error.message, error.type));
        else sendJson(res, 500, errorBody(500, String(error), 'InternalServerError'));
      });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  ctx.port = port;

  const tickMs = options.gpuTickMs ?? 200;
  const writeState = (): void => {
    if (!options.gpuStateFile) return;
    try {
      writeGpuState(options.gpuStateFile, gpu.state());
    } catch (error) {
      log(`servebench sim: cannot write GPU state file ${options.gpuStateFile}: ${(error as Error).message}`);
    }
  };
  let gpuTimer: SimTimer | null = null;
  const gpuTick = (): void => {
    const now = clock.nowMs();
    gpu.tick(now);
    const gen = scheduler.stats.generationTokens;
    genThroughput = ((gen - lastGenTokens) * 1000) / Math.max(1, now - lastTickMs);
    lastGenTokens = gen;
    lastTickMs = now;
    writeState();
    // Unref'd, as the interval it replaces: the GPU ticker alone never keeps the process alive.
    gpuTimer = clock.setTimer(gpuTick, tickMs, true);
  };
  gpuTimer = clock.setTimer(gpuTick, tickMs, true);
  writeState();
  function stopTimers(): void {
    if (gpuTimer !== null) clock.clearTimer(gpuTimer);
    gpuTimer = null;
  }

  for (const line of readyLines(ctx)) log(line);
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    url,
    port,
    engineCounts: () => ({
      running: scheduler.running.length,
      waiting: scheduler.waiting.length,
      finished: scheduler.stats.finished,
    }),
    close: async () => {
      if (closed) return;
      closed = true;
      scheduler.stop();
      stopTimers();
      gpu.release();
      writeState();
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      if (!crashed) await done;
      truthLog?.flush();
    },
  };
}
