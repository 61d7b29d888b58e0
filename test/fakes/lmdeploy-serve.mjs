#!/usr/bin/env node
// A stand-in for `python` with LMDeploy installed, after its source: lmdeploy/cli/serve.py and cli/utils.py
// (`python -m lmdeploy serve api_server MODEL_PATH` and its argparse arguments: an unknown one or a value outside
// `choices` is argparse's error, exit 2), serve/openai/api_server.py (the engine is built before uvicorn starts,
// then the HINT line three times), serve/openai/endpoints/management.py (/health 503 "unhealthy" until the engine's
// health monitor runs, 200 "healthy" after), metrics/loggers.py (lmdeploy:* names with model_name and engine
// labels, on unless --disable-metrics) and pytorch/engine/executor/base.py (its out-of-memory lines).
// FAKE_ENGINE_MODE: ok | oom; FAKE_ENGINE_RECORD: one JSON line per process (engine-core.mjs).
import { createServer } from 'node:http';
import { record } from './engine-core.mjs';
import { complete, newStats, sendJson } from './openai-stream.mjs';

const VERSION = process.env.FAKE_ENGINE_VERSION ?? '0.16.0';
const argv = process.argv.slice(2);
const fail = (lines, code = 1) => {
  for (const l of lines) console.error(l);
  process.exit(code);
};

if (argv[0] === '-c') {
  record({ kind: 'probe', argv });
  if (!/import lmdeploy/.test(argv[1] ?? '')) fail(["ModuleNotFoundError: No module named 'x'"]);
  console.log(VERSION);
  process.exit(0);
}
if (argv[0] !== '-m' || argv[1] !== 'lmdeploy') fail([`/usr/bin/python3: No module named ${argv[1] ?? ''}`]);

// api_server's arguments that take a value (with their choices where argparse has them), and its flags.
const CHOICES = {
  '--backend': ['pytorch', 'turbomind'],
  '--dtype': ['auto', 'float16', 'bfloat16'],
  '--model-format': ['hf', 'awq', 'gptq', 'compressed-tensors', 'fp8', 'mxfp4'],
  '--device': ['cuda', 'ascend', 'maca', 'camb'],
};
const INT = [
  '--server-port',
  '--tp',
  '--dp',
  '--session-len',
  '--max-batch-size',
  '--cache-block-seq-len',
  '--max-prefill-token-num',
  '--dllm-block-length',
  '--max-concurrent-requests',
];
const FLOAT = ['--cache-max-entry-count', '--dllm-confidence-threshold'];
const QUANT_POLICY = [
  'none',
  'int4',
  'int8',
  'fp8',
  'fp8_e4m3',
  'fp8_e5m2',
  'turbo_quant',
  '0',
  '4',
  '8',
  '16',
  '17',
  '42',
];
const VALUE = [
  '--server-name',
  '--model-name',
  '--log-level',
  '--quant-policy',
  '--chat-template',
  ...Object.keys(CHOICES),
  ...INT,
  ...FLOAT,
];
const FLAGS = ['--enable-prefix-caching', '--disable-metrics', '--trust-remote-code', '--eager-mode'];
const error = (text) =>
  fail(
    [
      'usage: lmdeploy serve api_server [-h] [--server-name SERVER_NAME] [--server-port SERVER_PORT] ... model_path',
      `lmdeploy serve api_server: error: ${text}`,
    ],
    2,
  );

const args = argv.slice(2);
if (args[0] !== 'serve' || args[1] !== 'api_server')
  error("argument: invalid choice (choose from 'api_server', 'proxy')");
const opts = {};
const unknown = [];
let model;
for (let i = 2; i < args.length; i++) {
  const a = args[i];
  if (FLAGS.includes(a)) opts[a] = true;
  else if (VALUE.includes(a)) {
    const v = args[++i];
    if (v === undefined) error(`argument ${a}: expected one argument`);
    if (CHOICES[a] && !CHOICES[a].includes(v))
      error(`argument ${a}: invalid choice: '${v}' (choose from ${CHOICES[a].map((c) => `'${c}'`).join(', ')})`);
    if (INT.includes(a) && !/^-?\d+$/.test(v)) error(`argument ${a}: invalid int value: '${v}'`);
    if (FLOAT.includes(a) && !Number.isFinite(Number(v))) error(`argument ${a}: invalid float value: '${v}'`);
    if (a === '--quant-policy' && !QUANT_POLICY.includes(v.toLowerCase()))
      error(`argument --quant-policy: invalid _parse value: '${v}'`);
    opts[a] = v;
  } else if (a.startsWith('-')) unknown.push(a);
  else if (model === undefined) model = a;
  else unknown.push(a);
}
if (unknown.length > 0) error(`unrecognized arguments: ${unknown.join(' ')}`);
if (model === undefined) error('the following arguments are required: model_path');

const mode = process.env.FAKE_ENGINE_MODE ?? 'ok';
const host = opts['--server-name'] ?? '0.0.0.0';
const port = Number(opts['--server-port'] ?? 23333);
const served = opts['--model-name'] ?? model;
const slots = Number(opts['--max-batch-size'] ?? 256);
const backend = opts['--backend'] ?? 'turbomind';
record({ kind: 'engine', engine: 'lmdeploy', argv, mode, backend });

await new Promise((r) => setTimeout(r, 10)); // building the engine
if (mode === 'oom')
  fail([
    'Traceback (most recent call last):',
    '  File "lmdeploy/pytorch/engine/executor/base.py", line 179',
    'RuntimeError: No enough gpu memory for kv cache.',
  ]);

const stats = newStats();
let healthy = false;
const labels = `{engine="0",model_name="${served}"}`;
function prometheus() {
  return `${[
    '# HELP lmdeploy:num_requests_running Number of requests in model execution batches.',
    '# TYPE lmdeploy:num_requests_running gauge',
    `lmdeploy:num_requests_running${labels} ${stats.running}`,
    '# TYPE lmdeploy:num_requests_waiting gauge',
    `lmdeploy:num_requests_waiting${labels} ${stats.waiting}`,
    '# TYPE lmdeploy:gpu_cache_usage_perc gauge',
    `lmdeploy:gpu_cache_usage_perc${labels} ${Math.min(1, stats.running / slots).toFixed(4)}`,
    '# TYPE lmdeploy:prompt_tokens_total counter',
    `lmdeploy:prompt_tokens_total${labels} ${stats.promptTokens}`,
    '# TYPE lmdeploy:generation_tokens_total counter',
    `lmdeploy:generation_tokens_total${labels} ${stats.generationTokens}`,
    '# TYPE lmdeploy:cached_tokens_total counter',
    `lmdeploy:cached_tokens_total${labels} 0`,
  ].join('\n')}\n`;
}

const server = createServer((req, res) => {
  const url = (req.url ?? '/').split('?')[0];
  if (url === '/health')
    return healthy
      ? sendJson(res, 200, { status: 'healthy' })
      : sendJson(res, 503, { status: 'unhealthy', message: 'Engine health monitor is not initialized.' });
  if (url === '/v1/models')
    return sendJson(res, 200, { object: 'list', data: [{ id: served, object: 'model', owned_by: 'lmdeploy' }] });
  if (url === '/metrics' && !opts['--disable-metrics']) {
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
    return void res.end(prometheus());
  }
  if (req.method === 'POST' && url === '/v1/chat/completions')
    return void complete(req, res, { api: 'chat', model: served, stats, slots });
  if (req.method === 'POST' && url === '/v1/completions')
    return void complete(req, res, { api: 'completions', model: served, stats, slots });
  return sendJson(res, 404, { detail: 'Not Found' });
});
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    console.log('INFO:     Shutting down');
    server.close();
    server.closeAllConnections();
    process.exit(0);
  });
}
for (let i = 0; i < 3; i++)
  console.log(
    `HINT:    Please open \x1b[93m\x1b[1mhttp://${host}:${port}\x1b[0m in a browser for detailed api usage!!!`,
  );
await new Promise((resolve) => server.listen(port, host === '0.0.0.0' ? '127.0.0.1' : host, resolve));
console.log(`INFO:     Started server process [${process.pid}]`);
console.log(`INFO:     Uvicorn running on http://${host}:${port} (Press CTRL+C to quit)`);
// The lifespan starts the health monitor a moment after the socket listens: /health answers 503 until then.
setTimeout(() => (healthy = true), 20);
