import { spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
// @ts-expect-error: the build's own plugin is plain JavaScript
import { rawText } from '../../../scripts/raw-text-plugin.mjs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { simCommand } from '../../../src/cli/sim-command.js';
import { UserError } from '../../../src/core/errors.js';
import { postJson, waitFor } from './helpers.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
let cli = '';

beforeAll(async () => {
  // A private bundle of the CLI, so this test does not depend on a fresh `npm run build:cli`.
  const out = join(root, 'node_modules', '.cache', 'servebench-sim-test');
  mkdirSync(out, { recursive: true });
  cli = join(out, `cli-${process.pid}.mjs`);
  await build({
    entryPoints: [join(root, 'src/cli/main.ts')],
    outfile: cli,
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'silent',
    plugins: [rawText],
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
});

afterEach(() => vi.restoreAllMocks());
afterAll(() => rmSync(cli, { force: true }));

function runCli(args: string[]): { lines: string[]; exit: Promise<number | null>; kill: (s: NodeJS.Signals) => void } {
  const child = spawn(process.execPath, [cli, 'sim', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let buf = '';
  const onData = (b: Buffer): void => {
    buf += b.toString();
    const parts = buf.split('\n');
    buf = parts.pop() ?? '';
    lines.push(...parts);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  return { lines, exit: new Promise((r) => child.once('exit', (code) => r(code))), kill: (s) => child.kill(s) };
}

describe('servebench sim (CLI)', () => {
  it('prints the vLLM start-up lines, serves, and exits 0 on SIGTERM', async () => {
    const logs: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: unknown) => void logs.push(String(line)));
    const done = simCommand(['--port', '0', '--profile', 'instant', '--max-num-seqs', '12', '--model', 'cli-model']);
    const ready = await waitFor(
      () => logs.find((l) => /Uvicorn running on http:\/\/127\.0\.0\.1:\d+/.test(l)),
      'ready line',
    );
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(ready)![0];
    expect(logs.join('\n')).toMatch(/GPU KV cache size: [\d,]+ tokens/);
    expect(logs.join('\n')).toMatch(/Maximum concurrency for [\d,]+ tokens per request: [\d.]+x/);
    await waitFor(() => logs.find((l) => l.includes('Application startup complete.')), 'startup complete');
    const body = (await (
      await postJson(`${url}/v1/completions`, { model: 'cli-model', prompt: 'x', max_tokens: 2, ignore_eos: true })
    ).json()) as {
      usage: { completion_tokens: number };
    };
    expect(body.usage.completion_tokens).toBe(2);
    process.emit('SIGTERM');
    expect(await done).toBe(0);
  });

  it('prints the SGLang ready line', async () => {
    const logs: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: unknown) => void logs.push(String(line)));
    const done = simCommand(['--port', '0', '--mimic', 'sglang', '--profile', 'instant']);
    await waitFor(() => logs.find((l) => l.endsWith('The server is fired up and ready to roll!')), 'sglang ready line');
    process.emit('SIGINT');
    expect(await done).toBe(0);
  });

  it('rejects bad flags with one line naming the fix', async () => {
    await expect(simCommand(['--bogus'])).rejects.toThrow(/--bogus.*servebench sim --help/);
    await expect(simCommand(['--mimic', 'tgi'])).rejects.toThrow(/--mimic must be one of vllm, sglang, openai/);
    await expect(simCommand(['--port', 'x'])).rejects.toThrow(UserError);
    await expect(simCommand(['--max-num-seqs', '0'])).rejects.toThrow(/max-num-seqs/);
    await expect(simCommand(['--profile', 'nope'])).rejects.toThrow(/unknown sim profile/);
    await expect(simCommand(['--fault', 'explode'])).rejects.toThrow(/unknown fault/);
  });

  it('oom-on-start: prints the OOM line and exits 1', async () => {
    const run = runCli(['--port', '0', '--fault', 'oom-on-start']);
    expect(await run.exit).toBe(1);
    expect(run.lines.join('\n')).toMatch(/No available memory for the cache blocks/);
  });

  it('crash-after: the process exits non-zero after N requests', async () => {
    const run = runCli(['--port', '0', '--profile', 'instant', '--fault', 'crash-after=2']);
    const ready = await waitFor(() => run.lines.find((l) => /Uvicorn running on/.test(l)), 'ready line');
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(ready)![0];
    for (let i = 0; i < 2; i++) await (await postJson(`${url}/v1/completions`, { prompt: 'x', max_tokens: 1 })).json();
    expect(await run.exit).toBe(1);
  });
});
