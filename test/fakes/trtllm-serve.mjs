#!/usr/bin/env node
// A stand-in for `python` with TensorRT-LLM installed, after its source: tensorrt_llm/commands/serve.py (the
// `serve MODEL` click command and its underscore options; an unknown option is click's usage error, exit 2),
// serve/openai_server.py (/health 200, /version, /v1/models naming the model, or a local folder by its name;
// /metrics answers iteration stats as JSON; Prometheus trtllm_* names at /prometheus/metrics only with
// return_perf_metrics in the --extra_llm_api_options file, the running/waiting gauges only with
// enable_iter_perf_stats), and the lines it logs (version banner, the KV cache allocation, max_num_requests).
// It listens only once the model is loaded, as trtllm-serve does.
// FAKE_ENGINE_MODE: ok | oom | nogpu | port; FAKE_ENGINE_RECORD: one JSON line per process (engine-core.mjs).
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { basename } from 'node:path';
import { record } from './engine-core.mjs';
import { complete, newStats, sendJson } from './openai-stream.mjs';

const VERSION = process.env.FAKE_ENGINE_VERSION ?? '1.1.0';
const argv = process.argv.slice(2);
const log = (line) => console.log(line);
const fail = (lines, code = 1) => {
  for (const l of lines) console.error(l);
  process.exit(code);
};

if (argv[0] === '-c') {
  record({ kind: 'probe', argv });
  if (!/import tensorrt_llm/.test(argv[1] ?? '')) fail([`ModuleNotFoundError: No module named 'x'`]);
  log(`[TensorRT-LLM] TensorRT-LLM version: ${VERSION}`);
  log(VERSION);
  process.exit(0);
}
if (argv[0] !== '-m' || argv[1] !== 'tensorrt_llm.commands.serve')
  fail([`/usr/bin/python3: No module named ${argv[1] ?? ''}`]);

// serve.py's click options that take a value (int ones checked as click does), and its flags.
const INT = [
  '--port',
  '--max_beam_width',
  '--max_batch_size',
  '--max_num_tokens',
  '--max_seq_len',
  '--tp_size',
  '--tensor_parallel_size',
  '--pp_size',
  '--ep_size',
  '--gpus_per_node',
  '--num_postprocess_workers',
];
const VALUE = [
  '--host',
  '--backend',
  '--log_level',
  '--tokenizer',
  '--kv_cache_free_gpu_memory_fraction',
  '--free_gpu_memory_fraction',
  '--extra_llm_api_options',
  '--config',
  '--revision',
  '--reasoning_parser',
  ...INT,
];
const FLAGS = ['--trust_remote_code', '--enable_chunked_prefill', '--fail_fast_on_attention_window_too_large'];
const usage = (error) =>
  fail(
    [
      'Usage: python -m tensorrt_llm.commands.serve serve [OPTIONS] MODEL',
      "Try '... --help' for help.",
      '',
      `Error: ${error}`,
    ],
    2,
  );

const args = argv.slice(2);
if (args[0] !== 'serve') usage(`No such command '${args[0] ?? ''}'.`);
const opts = {};
let model;
for (let i = 1; i < args.length; i++) {
  const a = args[i];
  if (FLAGS.includes(a)) opts[a] = true;
  else if (VALUE.includes(a)) {
    const v = args[++i];
    if (v === undefined) usage(`Option '${a}' requires an argument.`);
    if (INT.includes(a) && !/^-?\d+$/.test(v)) usage(`Invalid value for '${a}': '${v}' is not a valid integer.`);
    if (a === '--backend' && !['pytorch', 'tensorrt', 'trt', '_autodeploy'].includes(v))
      usage(`Invalid value for '--backend': '${v}' is not one of 'pytorch', 'tensorrt', '_autodeploy'.`);
    opts[a] = v;
  } else if (a.startsWith('-')) usage(`No such option: ${a}`);
  else if (model === undefined) model = a;
  else usage(`Got unexpected extra argument (${a})`);
}
if (model === undefined) usage("Missing argument 'MODEL'.");

/** The options file: the keys servebench writes (return_perf_metrics, enable_iter_perf_stats, kv_cache_config). */
function llmApiOptions(file) {
  if (!file) return {};
  const out = {};
  let section;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^(\s*)([a-z_]+):\s*(.*)$/.exec(line);
    if (!m) continue;
    // Scalars as servebench writes them: JSON numbers, booleans and strings (which YAML reads alike).
    const value = m[3] === '' ? {} : JSON.parse(m[3]);
    if (m[1] === '') {
      out[m[2]] = value;
      section = m[3] === '' ? m[2] : undefined;
    } else if (section) out[section][m[2]] = value;
  }
  return out;
}

const mode = process.env.FAKE_ENGINE_MODE ?? 'ok';
const host = opts['--host'] ?? 'localhost';
const port = Number(opts['--port'] ?? 8000);
const options = llmApiOptions(opts['--extra_llm_api_options'] ?? opts['--config']);
const maxBatch = Number(opts['--max_batch_size'] ?? 2048);
const maxSeqLen = Number(opts['--max_seq_len'] ?? 131072);
const maxTokens = Number(opts['--max_num_tokens'] ?? 8192);
record({ kind: 'engine', engine: 'trtllm', argv, mode, options });

log(`[TensorRT-LLM] TensorRT-LLM version: ${VERSION}`);
if (mode === 'nogpu') fail(['Traceback (most recent call last):', 'ValueError: No GPU devices found on the node']);
if (mode === 'port')
  fail([`RuntimeError: Failed to bind socket to ${host}:${port}: [Errno 98] Address already in use`]);
log(`[TRT-LLM] [I] Using LLM with PyTorch backend`);
if (mode === 'oom')
  fail([
    'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.20 GiB is free.',
  ]);
const fraction = Number(options.kv_cache_config?.free_gpu_memory_fraction ?? 0.9);
const kvTokens = Math.round(220480 * fraction);
log('[TensorRT-LLM][INFO] Number of tokens per block: 32.');
log(
  `[TensorRT-LLM][INFO] [MemUsageChange] Allocated ${(kvTokens / 8192).toFixed(2)} GiB for max tokens in paged KV cache (${kvTokens}).`,
);
log(
  `[TRT-LLM] [I] max_seq_len=${maxSeqLen}, max_num_requests=${maxBatch}, max_num_tokens=${maxTokens}, max_batch_size=${maxBatch}`,
);

const served = existsSync(model) ? basename(model) : model;
const stats = newStats();
const labels = '{model_name="undefined",engine_type="undefined"}';
function prometheus() {
  const lines = [
    '# HELP trtllm_prompt_tokens_total Cumulative number of prompt (input) tokens processed.',
    '# TYPE trtllm_prompt_tokens_total counter',
    `trtllm_prompt_tokens_total${labels} ${stats.promptTokens}`,
    '# TYPE trtllm_generation_tokens_total counter',
    `trtllm_generation_tokens_total${labels} ${stats.generationTokens}`,
    '# TYPE trtllm_request_success_total counter',
    `trtllm_request_success_total{model_name="undefined",engine_type="undefined",finished_reason="length"} ${stats.requests}`,
  ];
  // The iteration gauges come from the iteration stats collector, which runs only with enable_iter_perf_stats.
  if (options.enable_iter_perf_stats === true)
    lines.push(
      '# TYPE trtllm_num_requests_running gauge',
      `trtllm_num_requests_running${labels} ${stats.running}`,
      '# TYPE trtllm_num_requests_waiting gauge',
      `trtllm_num_requests_waiting${labels} ${stats.waiting}`,
      '# TYPE trtllm_kv_cache_utilization gauge',
      `trtllm_kv_cache_utilization${labels} ${Math.min(1, stats.running / maxBatch).toFixed(4)}`,
    );
  return `${lines.join('\n')}\n`;
}

const server = createServer((req, res) => {
  const url = (req.url ?? '/').split('?')[0];
  if (url === '/health') return void res.writeHead(200).end();
  if (url === '/version') return sendJson(res, 200, { version: VERSION });
  if (url === '/v1/models')
    return sendJson(res, 200, { object: 'list', data: [{ id: served, object: 'model', owned_by: 'tensorrt_llm' }] });
  if (url === '/metrics') return sendJson(res, 200, [{ numActiveRequests: stats.running, iter: stats.requests }]);
  if (url === '/prometheus/metrics' && options.return_perf_metrics === true) {
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
    return void res.end(prometheus());
  }
  if (req.method === 'POST' && url === '/v1/chat/completions')
    return void complete(req, res, { api: 'chat', model: served, stats, slots: maxBatch });
  if (req.method === 'POST' && url === '/v1/completions')
    return void complete(req, res, { api: 'completions', model: served, stats, slots: maxBatch });
  return sendJson(res, 404, { detail: 'Not Found' });
});
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    log('INFO:     Shutting down');
    server.close();
    server.closeAllConnections();
    process.exit(0);
  });
}
await new Promise((r) => setTimeout(r, 20)); // loading the model: nothing listens yet
await new Promise((resolve) => server.listen(port, host === 'localhost' ? '127.0.0.1' : host, resolve));
log(`INFO:     Started server process [${process.pid}]`);
log('INFO:     Waiting for application startup.');
log('INFO:     Application startup complete.');
log(`INFO:     Uvicorn running on http://${host}:${port} (Press CTRL+C to quit)`);
