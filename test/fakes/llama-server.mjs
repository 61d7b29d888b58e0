#!/usr/bin/env node
// A stand-in for llama.cpp's `llama-server`, after its source (tools/server/server.cpp, server-context.cpp,
// server-http.cpp, common/arg.cpp): `--version` on stderr; the HTTP server binds before the model loads
// (/health answers 503 "Loading model" meanwhile, 200 after); the log lines llama.cpp prints; -m must name a
// file that exists; N parallel slots (-np) share the context (-c), requests beyond them wait (deferred); the
// OpenAI stream has a role-only first chunk, usage in a `choices: []` chunk with `timings` (only with
// include_usage), and the connection is closed after every stream; a prompt past the per-slot context gets
// HTTP 400 exceed_context_size_error; /metrics (with --metrics) uses llamacpp:* names.
// FAKE_ENGINE_MODE: ok | oom | hang; FAKE_ENGINE_RECORD: see engine-core.mjs; FAKE_LLAMA_BUILD: no-git (below).
// GET /fake/crash: dies mid-run.
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { basename } from 'node:path';
import { record } from './engine-core.mjs';

const argv = process.argv.slice(2);
const flag = (...names) => {
  for (const n of names) {
    const i = argv.indexOf(n);
    if (i >= 0) return argv[i + 1];
  }
  return undefined;
};
const log = (line) => process.stderr.write(`${line}\n`);

// FAKE_LLAMA_BUILD=no-git: built from a source tarball or `git archive`, where cmake/build-info.cmake finds no git
// and keeps BUILD_NUMBER 0, BUILD_COMMIT "unknown", the compiler as "${CMAKE_C_COMPILER_ID} ${VERSION}".
const noGit = process.env.FAKE_LLAMA_BUILD === 'no-git';
const build = noGit ? { number: 0, commit: 'unknown', compiler: 'GNU 12.2.0', target: 'Linux x86_64' } : null;
if (argv.includes('--version')) {
  log(build ? `version: ${build.number} (${build.commit})` : 'version: 6500 (6c7a4415)');
  log(build ? `built with ${build.compiler} for ${build.target}` : 'built with cc (GCC) 13.3.0 for x86_64-linux-gnu');
  process.exit(0);
}

const mode = process.env.FAKE_ENGINE_MODE ?? 'ok';
record({ kind: 'engine', engine: 'llamacpp', argv, mode });
const host = flag('--host') ?? '127.0.0.1';
const port = Number(flag('--port') ?? 8080);
const modelPath = flag('-m', '--model');
const hfRepo = flag('-hf', '--hf-repo');
const nCtx = Number(flag('-c', '--ctx-size') ?? 4096);
const nSlots = Number(flag('-np', '--parallel') ?? 4);
const nCtxSlot = Math.floor(nCtx / nSlots);
const metricsOn = argv.includes('--metrics');
const alias = flag('-a', '--alias') ?? (modelPath ? basename(modelPath) : (hfRepo ?? 'model'));

log(
  build
    ? `build: ${build.number} (${build.commit}) with ${build.compiler} for ${build.target}`
    : 'build: 6500 (6c7a4415) with cc (GCC) 13.3.0 for x86_64-linux-gnu',
);
log('system info: n_threads = 8, n_threads_batch = 8, total_threads = 16');

let loaded = false;
let busy = 0;
const queue = [];
const stats = { promptTokens: 0, predicted: 0, decodes: 0 };
const acquire = () =>
  new Promise((resolve) => {
    if (busy < nSlots) {
      busy++;
      resolve();
    } else queue.push(resolve);
  });
const release = () => {
  const next = queue.shift();
  if (next) next();
  else busy--;
};
const tokensOf = (text) => Math.max(1, String(text).trim().split(/\s+/).filter(Boolean).length);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function sendJson(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

async function complete(req, res, api) {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  let body;
  try {
    body = JSON.parse(raw);
  } catch {
    return sendJson(res, 500, { error: { code: 500, message: 'invalid JSON', type: 'server_error' } });
  }
  const prompt =
    api === 'chat' ? (body.messages ?? []).map((m) => String(m.content ?? '')).join(' ') : String(body.prompt ?? '');
  const nPrompt = tokensOf(prompt) + (api === 'chat' ? 4 : 0);
  const nPredict = Number(body.max_tokens ?? body.max_completion_tokens ?? 16);
  if (nPrompt >= nCtxSlot) {
    return sendJson(res, 400, {
      error: {
        code: 400,
        message: `the request exceeds the available context size, try increasing it`,
        type: 'exceed_context_size_error',
        n_prompt_tokens: nPrompt,
        n_ctx: nCtxSlot,
      },
    });
  }
  await acquire();
  const t0 = performance.now();
  try {
    const id = `chatcmpl-${Math.random().toString(36).slice(2)}`;
    const created = Math.floor(Date.now() / 1000);
    const object = api === 'chat' ? 'chat.completion.chunk' : 'text_completion';
    const choice = (content, finish) =>
      api === 'chat'
        ? { index: 0, finish_reason: finish, delta: content === undefined ? {} : { content } }
        : { index: 0, text: content ?? '', logprobs: null, finish_reason: finish };
    await sleep(2); // prompt processing
    const tPrompt = performance.now() - t0;
    stats.promptTokens += nPrompt;
    const usage = { completion_tokens: nPredict, prompt_tokens: nPrompt, total_tokens: nPrompt + nPredict };
    if (!body.stream) {
      await sleep(nPredict);
      stats.predicted += nPredict;
      const text = ' tok'.repeat(nPredict);
      return sendJson(res, 200, {
        id,
        created,
        model: alias,
        object: api === 'chat' ? 'chat.completion' : 'text_completion',
        choices: [
          api === 'chat'
            ? { index: 0, finish_reason: 'length', message: { role: 'assistant', content: text } }
            : { index: 0, finish_reason: 'length', text, logprobs: null },
        ],
        usage,
      });
    }
    // llama.cpp closes the connection after every stream.
    res.writeHead(200, { 'content-type': 'text/event-stream', connection: 'close' });
    const send = (obj) => res.write(`data: ${JSON.stringify(obj)}\n\n`);
    if (api === 'chat')
      send({
        id,
        created,
        model: alias,
        object,
        choices: [{ index: 0, finish_reason: null, delta: { role: 'assistant', content: null } }],
      });
    for (let i = 0; i < nPredict; i++) {
      await sleep(1);
      stats.predicted++;
      stats.decodes++;
      send({ id, created, model: alias, object, choices: [choice(' tok', null)] });
    }
    send({ id, created, model: alias, object, choices: [choice(undefined, 'length')] });
    if (body.stream_options?.include_usage) {
      const predictedMs = performance.now() - t0 - tPrompt;
      send({
        id,
        created,
        model: alias,
        object,
        choices: [],
        usage,
        timings: {
          prompt_n: nPrompt,
          prompt_ms: tPrompt,
          predicted_n: nPredict,
          predicted_ms: predictedMs,
          predicted_per_second: (nPredict * 1000) / Math.max(predictedMs, 1e-3),
        },
      });
    }
    res.end('data: [DONE]\n\n');
  } finally {
    release();
  }
  return undefined;
}

const server = createServer((req, res) => {
  const url = (req.url ?? '/').split('?')[0];
  if (url === '/health' || url === '/v1/health') {
    if (!loaded)
      return sendJson(res, 503, { error: { code: 503, message: 'Loading model', type: 'unavailable_error' } });
    return sendJson(res, 200, { status: 'ok' });
  }
  // The model list answers during loading too.
  if (url === '/v1/models' || url === '/models')
    return sendJson(res, 200, {
      object: 'list',
      data: [{ id: alias, object: 'model', owned_by: 'llamacpp', created: 0 }],
    });
  if (!loaded) return sendJson(res, 503, { error: { code: 503, message: 'Loading model', type: 'unavailable_error' } });
  if (url === '/metrics') {
    if (!metricsOn)
      return sendJson(res, 501, {
        error: {
          code: 501,
          message: 'This server does not support metrics endpoint. Start it with `--metrics`',
          type: 'not_supported_error',
        },
      });
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    return res.end(
      [
        '# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.',
        '# TYPE llamacpp:prompt_tokens_total counter',
        `llamacpp:prompt_tokens_total ${stats.promptTokens}`,
        '# TYPE llamacpp:tokens_predicted_total counter',
        `llamacpp:tokens_predicted_total ${stats.predicted}`,
        '# TYPE llamacpp:n_decode_total counter',
        `llamacpp:n_decode_total ${stats.decodes}`,
        '# TYPE llamacpp:requests_processing gauge',
        `llamacpp:requests_processing ${busy}`,
        '# TYPE llamacpp:requests_deferred gauge',
        `llamacpp:requests_deferred ${queue.length}`,
        '',
      ].join('\n'),
    );
  }
  if (url === '/fake/crash') {
    res.writeHead(200).end();
    log('/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:88: CUDA error');
    log('CUDA error: an illegal memory access was encountered');
    setImmediate(() => process.exit(134)); // GGML_ABORT: abort()
    return undefined;
  }
  if (req.method === 'POST' && (url === '/v1/chat/completions' || url === '/chat/completions'))
    return void complete(req, res, 'chat');
  if (req.method === 'POST' && (url === '/v1/completions' || url === '/completions'))
    return void complete(req, res, 'completions');
  return sendJson(res, 404, { error: { code: 404, message: 'File Not Found', type: 'not_found_error' } });
});

// Bind first (server.cpp: "start the HTTP server before loading the model to be able to serve /health requests").
server.once('error', () => {
  log(`couldn't bind HTTP server socket, hostname: ${host}, port: ${port}`);
  log('srv  llama_server: exiting due to HTTP server error');
  process.exit(1);
});
await new Promise((resolve) => server.listen(port, host, resolve));
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    log('srv    operator(): operator(): cleaning up before exit...');
    server.close();
    server.closeAllConnections();
    process.exit(0);
  });
}

log('srv  llama_server: loading model');
const model = modelPath ?? `/root/.cache/llama.cpp/${String(hfRepo).replace('/', '_')}.gguf`;
log(`srv    load_model: loading model '${model}'`);
await sleep(20); // loading: /health answers 503 meanwhile
if (modelPath && !existsSync(modelPath)) {
  log(`gguf_init_from_file: failed to open GGUF file '${modelPath}'`);
  log(`llama_model_load: error loading model: llama_model_loader: failed to load model from ${modelPath}`);
  log('llama_model_load_from_file_impl: failed to load model');
  log(`common_init_from_params: failed to load model '${modelPath}'`);
  log(`srv    load_model: failed to load model, '${modelPath}'`);
  log('srv  llama_server: exiting due to model loading error');
  process.exit(1);
}
log(
  `llama_model_loader: loaded meta data with 30 key-value pairs and 292 tensors from ${model} (version GGUF V3 (latest))`,
);
log('load_tensors: offloading 32 repeating layers to GPU');
log('load_tensors: offloaded 33/33 layers to GPU');
if (mode === 'oom') {
  log(
    'ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9216.00 MiB on device 0: cudaMalloc failed: out of memory',
  );
  log('alloc_tensor_range: failed to allocate CUDA0 buffer of size 9663676416');
  log('llama_model_load: error loading model: unable to allocate CUDA0 buffer');
  log('llama_model_load_from_file_impl: failed to load model');
  log('srv  llama_server: exiting due to model loading error');
  process.exit(1);
}
log('load_tensors:        CUDA0 model buffer size =  4403.49 MiB');
log(`llama_context: n_ctx         = ${nCtx}`);
log(`llama_context: n_ctx_per_seq = ${nCtxSlot}`);
log(
  `llama_kv_cache: size =  512.00 MiB (  ${nCtx} cells,  32 layers,  ${nSlots}/${nSlots} seqs), K (f16):  256.00 MiB, V (f16):  256.00 MiB`,
);
log(`srv          init: initializing slots, n_slots = ${nSlots}`);
for (let i = 0; i < nSlots; i++) log(`slot         init: id  ${i} | task -1 | new slot, n_ctx = ${nCtxSlot}`);
if (mode === 'hang') {
  log('still loading...');
} else {
  loaded = true;
  log('srv  llama_server: model loaded');
  log(`srv  llama_server: server is listening on http://${host}:${port}`);
  log('srv  update_slots: all slots are idle');
}
