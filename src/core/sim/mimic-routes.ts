import type { ServerResponse } from 'node:http';
import type { SimEngine } from './engine.js';
import { HttpError, sendJson, errorBody, sendText, type Router } from './http.js';
import { sglangMetrics, vllmMetrics } from './prometheus.js';
import { checkModel, parseGenerate, parseOpenAi, type ParseContext } from './request-parse.js';
import { serveEmbeddings, serveRerank, serveScore } from './pooling.js';
import { chatBodyOf, speakDialect } from './dialects.js';
import { MIMIC_VERSION, type StartupContext } from './startup-log.js';
import { tokenizeChat, tokenizeCompletion, type ChatMessage } from './tokenizer.js';

/** The engine, how requests are read, and the start-up facts (host, port once listening) the routes report. */
export interface RouteContext {
  engine: SimEngine;
  parse: ParseContext;
  startup: StartupContext;
}

/** /health: 200 with an empty body once loaded, 503 while the slow-start fault says it is loading. */
function health(engine: SimEngine, res: ServerResponse): void {
  if (!engine.ready) {
    sendJson(res, 503, errorBody(503, 'engine is still loading (slow-start fault)', 'ServiceUnavailableError'));
    return;
  }
  res.writeHead(200, { 'content-length': 0 });
  res.end();
}

/** vLLM's POST /tokenize answer: count, max_model_len and the token ids. */
function tokenizeAnswer(ctx: RouteContext, body: Record<string, unknown>): unknown {
  checkModel(ctx.parse, body);
  let ids: number[];
  if (Array.isArray(body.messages)) {
    const gen = body.add_generation_prompt !== false;
    ids = tokenizeChat(body.messages as ChatMessage[], gen);
  } else if (typeof body.prompt === 'string') {
    ids = tokenizeCompletion(body.prompt, body.add_special_tokens !== false);
  } else {
    throw new HttpError(400, "/tokenize needs 'prompt' (a string) or 'messages'");
  }
  return { count: ids.length, max_model_len: ctx.engine.profile.maxModelLen, tokens: ids, token_strs: null };
}

/**
 * SGLang's POST /tokenize and /v1/tokenize (serving_tokenize.py, sgl-project/sglang 004c82e): exactly one of
 * `prompt` (a string or a list, add_special_tokens applied) or `messages` (the chat handler's template, generation
 * prompt included unless continue_final_message); {tokens, count, max_model_len}, lists for a list prompt. The model
 * is not checked (its default stands in).
 */
function sglangTokenizeAnswer(ctx: RouteContext, body: Record<string, unknown>): unknown {
  const { prompt, messages } = body;
  const max = ctx.engine.profile.maxModelLen;
  if ((prompt === undefined || prompt === null) === (messages === undefined || messages === null)) {
    throw new HttpError(400, "Exactly one of 'prompt' or 'messages' must be provided.");
  }
  const special = body.add_special_tokens !== false;
  if (Array.isArray(messages)) {
    if (!messages.every((m) => m && typeof m === 'object' && typeof (m as ChatMessage).role === 'string')) {
      throw new HttpError(400, "'messages' must be a list of {role, content}");
    }
    const ids = tokenizeChat(messages as ChatMessage[], body.continue_final_message !== true);
    return { tokens: ids, count: ids.length, max_model_len: max };
  }
  if (typeof prompt === 'string') {
    const ids = tokenizeCompletion(prompt, special);
    return { tokens: ids, count: ids.length, max_model_len: max };
  }
  if (Array.isArray(prompt) && prompt.every((p) => typeof p === 'string')) {
    const lists = prompt.map((p: string) => tokenizeCompletion(p, special));
    return { tokens: lists, count: lists.map((l) => l.length), max_model_len: max };
  }
  throw new HttpError(400, 'Invalid prompt type: expected str or List[str].');
}

/** The OpenAI endpoints every mimic serves: chat, completions and the model list. */
function openAiRoutes(router: Router, ctx: RouteContext): void {
  const { engine, parse } = ctx;
  router.post('/v1/chat/completions', (body, req, res, ns, ms) =>
    engine.generate(req, res, parseOpenAi(parse, 'chat', body), ns, ms),
  );
  router.post('/v1/completions', (body, req, res, ns, ms) =>
    engine.generate(req, res, parseOpenAi(parse, 'completions', body), ns, ms),
  );
  // Anthropic's Messages and OpenAI's Responses: the chat engine behind them, its chunks spoken as their events.
  for (const dialect of ['messages', 'responses'] as const) {
    router.post(`/v1/${dialect}`, (body, req, res, ns, ms) => {
      const parsed = parseOpenAi(parse, 'chat', chatBodyOf(dialect, body));
      speakDialect(
        res,
        dialect,
        `${dialect === 'messages' ? 'msg' : 'resp'}_sim${ns.toString(16)}`,
        engine.model,
        parsed.promptTokens,
      );
      engine.generate(req, res, parsed, ns, ms);
    });
  }
  router.post('/v1/embeddings', (body, _req, res) => serveEmbeddings(engine, parse, body, res));
  // llama.cpp serves rerank under /rerank, /reranking and their /v1 forms; vLLM under /rerank, /v1/rerank and /v2/rerank.
  for (const path of ['/v1/rerank', '/rerank'])
    router.post(path, (body, _req, res) => serveRerank(engine, parse, body, res));
  // vLLM serves its score API under /score and /v1/score.
  for (const path of ['/v1/score', '/score'])
    router.post(path, (body, _req, res) => serveScore(engine, parse, body, res));
  router.get('/v1/models', (res) =>
    sendJson(res, 200, {
      object: 'list',
      data: [
        {
          id: engine.model,
          object: 'model',
          created: engine.created,
          owned_by: parse.mimic === 'openai' ? 'system' : parse.mimic,
          root: engine.model,
          parent: null,
          max_model_len: engine.profile.maxModelLen,
        },
        // vLLM lists each LoRA module after the base, its parent the base model (serving_models.py).
        ...(parse.adapters ?? []).map((name) => ({
          id: name,
          object: 'model',
          created: engine.created,
          owned_by: parse.mimic === 'openai' ? 'system' : parse.mimic,
          root: name,
          parent: engine.model,
          max_model_len: engine.profile.maxModelLen,
        })),
      ],
    }),
  );
}

/** vLLM: /health, /version, /metrics with vllm: names, and POST /tokenize. */
function vllmRoutes(router: Router, ctx: RouteContext): void {
  const { engine } = ctx;
  router.get('/health', (res) => health(engine, res));
  router.get('/version', (res) => sendJson(res, 200, { version: MIMIC_VERSION.vllm }));
  router.get('/metrics', (res) => sendText(res, vllmMetrics(engine.snapshot())));
  router.post('/tokenize', (body, _req, res) => sendJson(res, 200, tokenizeAnswer(ctx, body)));
  // vllm/entrypoints/serve/dev/cache/api_router.py: 200 with no body (vLLM serves it in dev mode only).
  router.action('/reset_prefix_cache', (res) => {
    engine.flushPrefixCache(false);
    res.writeHead(200).end();
  });
}

/** SGLang: /health(_generate), /(get_)model_info, /(get_)server_info, /metrics with sglang: names, native /generate, /(v1/)tokenize. */
function sglangRoutes(router: Router, ctx: RouteContext): void {
  const { engine, startup } = ctx;
  const { model, profile } = engine;
  router.get('/health', (res) => health(engine, res));
  router.get('/health_generate', (res) => health(engine, res));
  const modelInfo = (res: ServerResponse): void =>
    sendJson(res, 200, {
      model_path: model,
      tokenizer_path: model,
      is_generation: true,
      preferred_sampling_params: null,
      weight_version: 'default',
    });
  router.get('/model_info', modelInfo);
  router.get('/get_model_info', modelInfo);
  const serverInfo = (res: ServerResponse): void =>
    sendJson(res, 200, {
      model_path: model,
      served_model_name: model,
      host: startup.host,
      port: startup.port,
      context_length: profile.maxModelLen,
      max_running_requests: profile.maxNumSeqs,
      max_total_num_tokens: profile.kvCacheTokens,
      dllm_algorithm: profile.blockSize > 0 ? 'LowConfidence' : null,
      dllm_algorithm_config:
        profile.blockSize > 0 ? { block_size: profile.blockSize, threshold: profile.threshold } : null,
      version: MIMIC_VERSION.sglang,
      internal_states: [{ last_gen_throughput: engine.genThroughput }],
      simulated: true,
      sim_profile: profile.name,
    });
  // srt/entrypoints/http_server.py: 200 once flushed, 400 while requests run or wait (then nothing is flushed).
  router.action(
    '/flush_cache',
    (res) => {
      const done = engine.flushPrefixCache(true);
      res.writeHead(done ? 200 : 400, { 'content-type': 'text/plain' });
      res.end(done ? 'Cache flushed.\n' : 'Flush cache failed: requests are running or waiting.\n');
    },
    ['GET', 'POST'],
  );
  router.get('/server_info', serverInfo);
  router.get('/get_server_info', serverInfo);
  router.get('/metrics', (res) => sendText(res, sglangMetrics(engine.snapshot())));
  router.post('/generate', (body, req, res, ns, ms) =>
    engine.generate(req, res, parseGenerate(ctx.parse, body), ns, ms),
  );
  router.post('/tokenize', (body, _req, res) => sendJson(res, 200, sglangTokenizeAnswer(ctx, body)));
  router.post('/v1/tokenize', (body, _req, res) => sendJson(res, 200, sglangTokenizeAnswer(ctx, body)));
}

/** Registers the endpoints the context's mimic serves (openai: the OpenAI endpoints only). */
export function registerMimicRoutes(router: Router, ctx: RouteContext): void {
  openAiRoutes(router, ctx);
  if (ctx.parse.mimic === 'vllm') vllmRoutes(router, ctx);
  else if (ctx.parse.mimic === 'sglang') sglangRoutes(router, ctx);
}
