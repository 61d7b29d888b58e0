import { LAUNCHABLE_ENGINES } from '../../../src/shared/engines.js';
import { parseArgs } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ServerConfigSchema } from '../../../src/shared/config.js';
import { UserError } from '../../../src/core/errors.js';
import { parseDurationMs, serverConfigFromFlags, serverOptions } from '../../../src/cli/server-options.js';

function flags(argv: string[]): Record<string, unknown> {
  return parseArgs({ args: argv, options: serverOptions, strict: true, allowPositionals: false }).values;
}

const fromArgv = (argv: string[]) => serverConfigFromFlags(flags(argv));

describe('server flags', () => {
  it('default to the simulator', () => {
    expect(ServerConfigSchema.parse(fromArgv([])).engine).toBe('sim');
  });

  it('map every flag to the server config', () => {
    const input = fromArgv([
      '--engine',
      'vllm',
      '--model',
      'org/m',
      '--python',
      '/venv/bin/python',
      '--quantization',
      'fp8',
      '--dtype',
      'bfloat16',
      '--kv-cache-dtype',
      'fp8',
      '--tp',
      '2',
      '--max-model-len',
      '8192',
      '--gpu-memory',
      '0.9',
      '--max-seqs',
      '64',
      '--server-arg=--enforce-eager',
      '--server-arg=--max-num-batched-tokens 8192',
      '--port',
      '8000',
      '--host',
      '0.0.0.0',
      '--seed',
      '1',
      '--env',
      'CUDA_VISIBLE_DEVICES=0,1',
      '--env',
      'HF_TOKEN=hf_x=y',
      '--no-prefix-caching',
      '--start-timeout',
      '30m',
      '--served-model-name',
      'm',
    ]);
    expect(input).toEqual({
      engine: 'vllm',
      model: 'org/m',
      servedModelName: 'm',
      python: '/venv/bin/python',
      quantization: 'fp8',
      dtype: 'bfloat16',
      kvCacheDtype: 'fp8',
      tensorParallel: 2,
      maxModelLen: 8192,
      gpuMemoryFraction: 0.9,
      maxSeqs: 64,
      port: 8000,
      host: '0.0.0.0',
      seed: 1,
      prefixCaching: false,
      startTimeoutMs: 30 * 60_000,
      extraArgs: ['--enforce-eager', '--max-num-batched-tokens', '8192'],
      env: { CUDA_VISIBLE_DEVICES: '0,1', HF_TOKEN: 'hf_x=y' },
    });
  });

  it('build diffusion settings from --block-size, --threshold and --dllm-algorithm', () => {
    const input = fromArgv(['--engine', 'sglang', '--model', 'm', '--threshold', '0.9']);
    expect(ServerConfigSchema.parse(input).diffusion).toEqual({
      algorithm: 'LowConfidence',
      blockSize: 32,
      threshold: 0.9,
    });
    expect(fromArgv(['--block-size', '64', '--dllm-algorithm', 'Fast']).diffusion).toEqual({
      blockSize: 64,
      algorithm: 'Fast',
    });
  });

  it('send --server-arg to the simulator as its extra arguments, as to any engine', () => {
    expect(fromArgv(['--server-arg=--fault', '--server-arg', 'crash-after=3'])).toEqual({
      extraArgs: ['--fault', 'crash-after=3'],
    });
  });

  it('lay flags over a preset', () => {
    const byName = fromArgv(['--preset', 'llama-3.1-8b-vllm-bf16', '--max-model-len', '4096']);
    expect(byName).toMatchObject({
      engine: 'vllm',
      model: 'meta-llama/Llama-3.1-8B-Instruct',
      maxModelLen: 4096,
      dtype: 'bfloat16',
    });
    const given = serverConfigFromFlags(flags(['--threshold', '0.9']), {
      engine: 'sglang',
      model: 'x',
      diffusion: { blockSize: 32, threshold: 0.95 },
      extraArgs: ['--trust-remote-code'],
    });
    expect(given.diffusion).toEqual({ blockSize: 32, threshold: 0.9 });
    expect(given.extraArgs).toEqual(['--trust-remote-code']);
  });

  it('attach when the run command passes a --url', () => {
    expect(serverConfigFromFlags({ url: 'http://gpu-box:8000/v1' })).toEqual({
      engine: 'attach',
      url: 'http://gpu-box:8000/v1',
    });
  });

  it.each([
    [
      ['--engine', 'tgi'],
      new RegExp(`^--engine must be one of ${LAUNCHABLE_ENGINES.join(', ')} \\(got 'tgi'\\); use --url`),
    ],
    [['--engine', 'vllm'], /^vLLM needs a model: pass --model \(a hub id/],
    [['--tp', 'two'], /^--tp must be a positive integer \(got 'two'\)/],
    [['--tp', '0'], /^--tp must be a positive integer/],
    [['--max-model-len', '1.5'], /^--max-model-len must be a positive integer/],
    [['--gpu-memory', '90'], /^--gpu-memory must be a number in \(0, 1\] \(got '90'\)/],
    [['--threshold', '1.5'], /^--threshold must be a number in \(0, 1\]/],
    [['--port', '70000'], /^--port must be an integer from 0 to 65535/],
    [['--env', 'NOEQUALS'], /^--env must be KEY=VALUE \(got 'NOEQUALS'\)/],
    [['--env', '=x'], /^--env must be KEY=VALUE/],
    [['--start-timeout', 'soon'], /^--start-timeout must be a duration/],
    [['--prefix-caching', '--no-prefix-caching'], /contradict/],
    [['--preset', 'nope'], /^unknown --preset 'nope'/],
    [['--model', ' '], /^--model needs a value/],
  ])('reject %j in one line naming the flag', (argv, message) => {
    let error: unknown;
    try {
      fromArgv(argv);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UserError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message.split('\n')).toHaveLength(1);
  });

  it('never echo an --env value in an error', () => {
    expect(() => fromArgv(['--env', 'bad key=hf_secret'])).toThrow(/got 'bad key=\.\.\.'/);
  });

  it('reject --url together with --engine', () => {
    expect(() => serverConfigFromFlags({ url: 'http://x:1', engine: 'vllm' })).toThrow(
      /cannot be combined with --engine vllm/,
    );
    expect(() => serverConfigFromFlags({ url: 'ftp://x' })).toThrow(/--url must be an http\(s\) URL/);
  });

  it('parse durations', () => {
    expect(parseDurationMs('600')).toBe(600_000);
    expect(parseDurationMs('90s')).toBe(90_000);
    expect(parseDurationMs('1h')).toBe(3_600_000);
    expect(parseDurationMs('250ms')).toBe(250);
  });
});
