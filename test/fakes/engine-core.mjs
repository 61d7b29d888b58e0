// The body of the fake engines (python-fake.mjs, engine-sim-cli.mjs): a tiny HTTP server that prints
// vLLM's or SGLang's real start-up lines, or a real failure line and exit 1, chosen by FAKE_ENGINE_MODE:
//   ok | oom | kv | gated | notfound | port | cuda | hang | exit0 | sim
// Other knobs (environment):
//   FAKE_ENGINE_RECORD  file: one JSON line per process ({kind, pid, argv})
//   FAKE_ENGINE_IGNORE  signals the engine and its worker ignore, e.g. "SIGINT" or "SIGINT,SIGTERM"
//   FAKE_ENGINE_VERSION version reported by the probe and /version
// GET /fake/crash makes a running engine die the way a crashed engine does (real error line, exit 1).
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export function record(entry) {
  const file = process.env.FAKE_ENGINE_RECORD;
  if (file) appendFileSync(file, `${JSON.stringify({ pid: process.pid, ...entry })}\n`);
}

function flag(argv, name) {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

const ts = () => new Date().toISOString().slice(5, 19).replace('T', ' ');
const vllmLog = (file, text) => console.log(`INFO ${ts()} [${file}] ${text}`);
const sglangLog = (text) => console.log(`[${new Date().toISOString().slice(0, 19).replace('T', ' ')}] ${text}`);

const FAILURES = {
  vllm: {
    oom: [
      'ERROR [core.py:700] EngineCore failed to start.',
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.02 GiB is free.',
      'RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}',
    ],
    kv: [
      "ValueError: The model's max seq len (131072) is larger than the maximum number of tokens that can be stored in KV cache (93760). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
      'RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}',
    ],
    gated: [
      'OSError: You are trying to access a gated repo.',
      'huggingface_hub.errors.GatedRepoError: 403 Client Error. (Request ID: Root=1-abc)',
      'Cannot access gated repo for url https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/resolve/main/config.json.',
      'Access to model meta-llama/Llama-3.1-8B-Instruct is restricted and you are not in the authorized list.',
    ],
    notfound: [
      'pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig',
      "  Value error, Invalid repository ID or local directory specified: 'nobody/no-such-model'.",
    ],
    port: ['OSError: [Errno 98] Address already in use'],
    cuda: [
      'RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx',
    ],
  },
  sglang: {
    oom: ['RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.'],
    kv: [
      "ValueError: The model's max seq len (131072) is larger than the maximum number of tokens that can be stored in KV cache (93760). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
    ],
    gated: [
      'huggingface_hub.errors.GatedRepoError: 401 Client Error.',
      'Cannot access gated repo for url https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/resolve/main/config.json.',
    ],
    notfound: [
      "OSError: nobody/no-such-model is not a local folder and is not a valid model identifier listed on 'https://huggingface.co/models'",
    ],
    port: ['OSError: [Errno 98] Address already in use'],
    cuda: ['RuntimeError: CUDA driver version is insufficient for CUDA runtime version'],
  },
};

const flushed = () => new Promise((resolve) => process.stdout.write('', () => process.stderr.write('', resolve)));

function ignoreSignals(log) {
  const ignore = (process.env.FAKE_ENGINE_IGNORE ?? '').split(',').filter(Boolean);
  for (const sig of ignore) process.on(sig, () => log(`received ${sig}, ignoring it`));
  return ignore;
}

/** Starts a worker process in the same process group (as vLLM and SGLang fork workers); resolves once it is set up. */
function startWorker() {
  return new Promise((resolve, reject) => {
    const worker = spawn(process.execPath, [join(here, 'engine-sleeper.mjs')], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: process.env,
    });
    record({ kind: 'worker', pid: worker.pid, parent: process.pid });
    worker.once('message', () => {
      worker.disconnect();
      resolve(worker);
    });
    worker.once('error', reject);
  });
}

/** Runs a fake engine of `kind` ('vllm' | 'sglang') with the engine's own argv. */
export async function runEngine(kind, argv, { recordKind = 'engine' } = {}) {
  const mode = process.env.FAKE_ENGINE_MODE ?? 'ok';
  record({ kind: recordKind, engine: kind, argv, mode });
  const host = flag(argv, '--host') ?? '127.0.0.1';
  const port = Number(flag(argv, '--port') ?? 8000);
  const model = flag(argv, '--model') ?? flag(argv, '--model-path') ?? 'fake-model';
  const served = flag(argv, '--served-model-name') ?? model;
  const version = process.env.FAKE_ENGINE_VERSION ?? (kind === 'sglang' ? '0.5.2' : '0.10.1');
  const log = kind === 'sglang' ? sglangLog : (text) => vllmLog('api_server.py:1', text);

  if (mode === 'sim') {
    const cli = join(here, '..', '..', 'dist', 'cli.js');
    if (!existsSync(cli)) {
      console.error('fake engine: mode sim needs dist/cli.js (npm run build:cli)');
      process.exit(3);
    }
    const child = spawn(
      process.execPath,
      [cli, 'sim', '--mimic', kind, '--port', String(port), '--host', host, '--model', served],
      {
        stdio: 'inherit',
      },
    );
    record({ kind: 'worker', pid: child.pid, parent: process.pid });
    for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
    child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
    return;
  }

  ignoreSignals(log);
  if (kind === 'vllm') {
    log(`vLLM API server version ${version}`);
    // vLLM prints its non-default args, secrets included: servebench must redact them.
    log(`non-default args: ${JSON.stringify({ model, argv })}`);
    if (process.env.HF_TOKEN) console.log(`DEBUG using HF token ${process.env.HF_TOKEN} for ${model}`);
  } else {
    log(`server_args=ServerArgs(model_path='${model}', argv=${JSON.stringify(argv)})`);
    if (process.env.HF_TOKEN) console.log(`DEBUG using HF token ${process.env.HF_TOKEN}`);
  }

  const failure = FAILURES[kind][mode];
  if (failure) {
    log(kind === 'vllm' ? `Starting to load model ${model}...` : 'Load weight begin. avail mem=78.50 GB');
    for (const line of failure) console.error(line);
    process.exitCode = 1;
    return;
  }
  if (mode === 'exit0') {
    log('nothing to do');
    return;
  }

  await startWorker();
  let loaded = false;
  let healthAnswered = () => undefined;
  const firstHealthyAnswer = new Promise((resolve) => {
    healthAnswered = resolve;
  });
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    const json = (status, body) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url === '/health') {
      if (loaded) {
        healthAnswered();
        return res.writeHead(200).end();
      }
      return res.writeHead(503).end();
    }
    if (url === '/v1/models')
      return json(200, { object: 'list', data: [{ id: served, object: 'model', owned_by: kind }] });
    if (url === '/version') return json(200, { version });
    if (url === '/metrics') return res.writeHead(200, { 'content-type': 'text/plain' }).end('# fake\n');
    if (url === '/generate') return json(200, { text: 'warm' });
    if (url === '/fake/crash') {
      res.writeHead(200).end();
      console.error('RuntimeError: CUDA error: an illegal memory access was encountered');
      setImmediate(() => process.exit(1));
      return undefined;
    }
    return json(404, { error: 'not found' });
  });
  server.on('error', (error) => {
    console.error(`OSError: [Errno 98] ${error.code === 'EADDRINUSE' ? 'Address already in use' : error.message}`);
    process.exit(1);
  });
  // Like vLLM, bind before loading (/health answers 503 meanwhile).
  await new Promise((resolve) => server.listen(port, host, resolve));
  for (const sig of ['SIGINT', 'SIGTERM']) {
    if (process.listenerCount(sig) === 0) {
      process.on(sig, () => {
        log(`received ${sig}, shutting down`);
        server.close();
        server.closeAllConnections();
        process.exit(0);
      });
    }
  }

  if (kind === 'vllm') {
    vllmLog('gpu_model_runner.py:1', `Starting to load model ${model}...`);
    vllmLog('gpu_model_runner.py:2', 'Model loading took 14.99 GiB and 3.21 seconds');
    vllmLog('kv_cache_utils.py:1', 'GPU KV cache size: 51,200 tokens');
    vllmLog('kv_cache_utils.py:2', 'Maximum concurrency for 4096 tokens per request: 12.5x');
    vllmLog('gpu_model_runner.py:3', 'Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%');
    vllmLog('gpu_model_runner.py:4', 'Graph capturing finished in 5 secs, took 0.52 GiB');
    if (mode === 'hang') {
      log('still initialising...');
      return;
    }
    await flushed(); // the lines above reach the pipe before /health answers 200, as in a real engine
    loaded = true;
    vllmLog('api_server.py:2', `Starting vLLM API server 0 on http://${host}:${port}`);
    console.log(`INFO:     Uvicorn running on http://${host}:${port} (Press CTRL+C to quit)`);
    console.log('INFO:     Application startup complete.');
  } else {
    sglangLog('Load weight begin. avail mem=78.50 GB');
    sglangLog('Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.45 GB, mem usage=15.05 GB.');
    sglangLog('KV Cache is allocated. #tokens: 409600, K size: 25.00 GB, V size: 25.00 GB');
    sglangLog('Capture cuda graph begin. This can take up to several minutes. avail mem=12.30 GB');
    sglangLog('Capture cuda graph end. Time elapsed: 8.04 s. mem usage=0.80 GB. avail mem=11.50 GB.');
    sglangLog(
      'max_total_num_tokens=409600, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=48, context_len=131072, available_gpu_mem=11.50 GB',
    );
    if (mode === 'hang') return;
    // SGLang answers /health before its warm-up is done: readiness needs the ready line too.
    await flushed(); // the lines above reach the pipe before /health answers 200, as in a real engine
    loaded = true;
    console.log(`INFO:     Uvicorn running on http://${host}:${port} (Press CTRL+C to quit)`);
    // Hold the ready line until /health has answered 200 once: a client trusting /health alone would be early.
    await firstHealthyAnswer;
    sglangLog('The server is fired up and ready to roll!');
  }
}
