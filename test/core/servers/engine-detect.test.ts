import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServebenchService } from '../../../src/core/api.js';
import { createEngineDetector } from '../../../src/core/servers/engine-detect.js';
import type { CaptureResult } from '../../../src/core/servers/engine-probe.js';
import { dispatchCall } from '../../../src/core/ui-server/dispatch.js';
import { contractArgs } from '../../../src/shared/contract.js';
import { FAKE_PYTHON, makeRun, readRecord } from './helpers.js';

const FAKE_LLAMA = fileURLToPath(new URL('../../fakes/llama-server.mjs', import.meta.url));

let recordFile: string;
let env: NodeJS.ProcessEnv;
beforeEach(async () => {
  ({ recordFile } = await makeRun());
  env = { ...process.env, FAKE_ENGINE_RECORD: recordFile, FAKE_ENGINE_VERSION: '0.11.0' };
});
afterEach(() => {
  delete env.FAKE_PYTHON_MODULES;
});

/** How many times the fake python answered the version probe and --help. */
const asked = (): { probe: number; help: number } => {
  const entries = readRecord(recordFile);
  return {
    probe: entries.filter((e) => e.kind === 'probe').length,
    help: entries.filter((e) => e.kind === 'help').length,
  };
};

describe('the form engine look-up (fake python and llama-server executables)', () => {
  it('finds vLLM with its version and the quantization methods of its own --help', async () => {
    const detector = createEngineDetector({ env });
    const answer = await detector.detect({ engine: 'vllm', where: FAKE_PYTHON });
    expect(answer).toMatchObject({ engine: 'vllm', name: 'vLLM', probed: true, found: true, version: '0.11.0' });
    expect(answer.where).toBe(FAKE_PYTHON);
    expect(answer.quantizations).toContain('awq_marlin');
    expect(answer.quantizations).toContain('gptq');
    expect(answer.quantizations).not.toContain('None');
    // The fake lists awq_marlin twice, as vLLM's own choices list once did: offered once.
    expect(answer.quantizations!.filter((q) => q === 'awq_marlin')).toHaveLength(1);
    expect(asked()).toEqual({ probe: 1, help: 1 });
  });

  it("reads SGLang's list from sglang.launch_server --help", async () => {
    const answer = await createEngineDetector({ env }).detect({ engine: 'sglang', where: FAKE_PYTHON });
    expect(answer).toMatchObject({ name: 'SGLang', found: true, version: '0.11.0' });
    expect(answer.quantizations).toContain('w8a8_fp8');
    const help = readRecord(recordFile).find((e) => e.kind === 'help');
    expect(help?.argv).toEqual(['-m', 'sglang.launch_server', '--help']);
  });

  it('a python without the module: not found, with the pip line and the fix', async () => {
    env.FAKE_PYTHON_MODULES = 'sglang';
    const answer = await createEngineDetector({ env }).detect({ engine: 'vllm', where: FAKE_PYTHON });
    expect(answer).toMatchObject({ found: false, probed: true, installHint: 'pip install vllm' });
    expect(answer.message).toBe(`vLLM is not installed for '${FAKE_PYTHON}'`);
    expect(answer.fix).toMatch(/--python PATH/);
    expect(answer.version).toBeUndefined();
    expect(answer.quantizations).toBeUndefined();
  });

  it('an interpreter that is not there: not found, one line naming it', async () => {
    const answer = await createEngineDetector({ env }).detect({ engine: 'vllm', where: '/nonexistent/bin/python' });
    expect(answer).toMatchObject({ found: false, installHint: 'pip install vllm' });
    expect(answer.message).toMatch(/'\/nonexistent\/bin\/python' was not found/);
  });

  it('finds llama-server by its --version, where its own setting says', async () => {
    const answer = await createEngineDetector({ env }).detect({ engine: 'llamacpp', where: FAKE_LLAMA });
    expect(answer).toMatchObject({ name: 'llama.cpp', found: true, version: 'b6500 (6c7a4415)', where: FAKE_LLAMA });
    expect(answer.quantizations).toBeUndefined();
    const missing = await createEngineDetector({ env }).detect({ engine: 'llamacpp', where: '/nonexistent/llama' });
    expect(missing).toMatchObject({ found: false, installHint: expect.stringMatching(/llama\.cpp/) });
  });

  it('nothing to probe for the simulator, a command or an attached server: says why, runs nothing', async () => {
    const detector = createEngineDetector({ env, run: () => Promise.reject(new Error('must not run')) });
    const sim = await detector.detect({ engine: 'sim', where: FAKE_PYTHON });
    expect(sim).toMatchObject({ probed: false, found: true, name: 'Simulator' });
    expect(sim.message).toMatch(/built-in simulator/);
    expect((await detector.detect({ engine: 'command' })).message).toMatch(/command line as given/);
    expect((await detector.detect({ engine: 'attach' })).message).toMatch(/nothing is launched/);
  });

  it('an answer is reused per (engine, where) for the TTL, then asked again', async () => {
    let t = 0;
    const detector = createEngineDetector({ env, ttlMs: 30_000, now: () => t });
    // Two at once (a form re-rendering) share one look-up.
    const [a, b] = await Promise.all([
      detector.detect({ engine: 'vllm', where: FAKE_PYTHON }),
      detector.detect({ engine: 'vllm', where: ` ${FAKE_PYTHON} ` }),
    ]);
    expect(b).toBe(a);
    t = 29_999;
    await detector.detect({ engine: 'vllm', where: FAKE_PYTHON });
    expect(asked()).toEqual({ probe: 1, help: 1 });
    // Another engine with the same interpreter is another question.
    await detector.detect({ engine: 'sglang', where: FAKE_PYTHON });
    expect(asked()).toEqual({ probe: 2, help: 2 });
    t = 30_000;
    const again = await detector.detect({ engine: 'vllm', where: FAKE_PYTHON });
    expect(again).toMatchObject({ found: true, version: '0.11.0' });
    expect(asked()).toEqual({ probe: 3, help: 3 });
  });

  it('a probe that times out is an answer naming the check, and both commands get the limit', async () => {
    const limits: number[] = [];
    const run = async (_c: string, _a: string[], o: { timeoutMs: number }): Promise<CaptureResult> => {
      limits.push(o.timeoutMs);
      return { code: null, signal: 'SIGKILL', stdout: '', stderr: '', timedOut: true };
    };
    const answer = await createEngineDetector({ env, run, timeoutMs: 5_000 }).detect({
      engine: 'vllm',
      where: '/opt/py',
    });
    expect(answer).toMatchObject({ found: false, probed: true });
    expect(answer.message).toBe('vLLM did not answer `/opt/py -c "import vllm"` within 5 s');
    expect(limits).toEqual([5_000, 5_000]);
  });

  it('past the in-flight bound a request is answered busy at once, and nothing is cached for it', async () => {
    const pending: Array<(r: CaptureResult) => void> = [];
    const run = (): Promise<CaptureResult> => new Promise((resolve) => pending.push(resolve));
    const detector = createEngineDetector({ env, run, maxInFlight: 1 });
    const first = detector.detect({ engine: 'vllm', where: '/a/python' });
    const busy = await detector.detect({ engine: 'vllm', where: '/b/python' });
    expect(busy).toMatchObject({ found: false, probed: false, busy: true });
    expect(busy.message).toMatch(/look-ups are running: try again/);
    for (const resolve of pending.splice(0))
      resolve({ code: 0, signal: null, stdout: '0.9.0\n', stderr: '', timedOut: false });
    expect(await first).toMatchObject({ found: true, version: '0.9.0' });
    const second = detector.detect({ engine: 'vllm', where: '/b/python' });
    for (const resolve of pending.splice(0))
      resolve({ code: 0, signal: null, stdout: '0.8.0\n', stderr: '', timedOut: false });
    expect(await second).toMatchObject({ found: true, version: '0.8.0' });
  });

  it("redacts the environment's secrets from what a failing interpreter printed", async () => {
    const run = async (): Promise<CaptureResult> => ({
      code: 1,
      signal: null,
      stdout: '',
      stderr: 'RuntimeError: bad token hf_secret_value_123456',
      timedOut: false,
    });
    const answer = await createEngineDetector({ env: { HF_TOKEN: 'hf_secret_value_123456' }, run }).detect({
      engine: 'vllm',
      where: '/opt/py',
    });
    expect(answer.found).toBe(false);
    expect(answer.message).toMatch(/RuntimeError: bad token/);
    expect(answer.message).not.toContain('hf_secret_value_123456');
  });
});

describe('probeEngine through the contract', () => {
  it('the service answers with its environment; the door checks the request first', async () => {
    const service = createServebenchService({ outDir: '/tmp/sb-unused', deps: {} as never, env });
    const outcome = await dispatchCall(service, 'probeEngine', [{ engine: 'vllm', where: FAKE_PYTHON }]);
    expect(outcome).toMatchObject({ ok: true, result: { found: true, version: '0.11.0' } });
    for (const bad of [
      [{ engine: 'tgi' }],
      [{ engine: 'vllm', where: 7 }],
      [{ engine: 'vllm', where: '' }],
      [{ engine: 'vllm', where: 'a\u0000b' }],
      [{ engine: 'vllm', where: 'x'.repeat(5000) }],
      [{ engine: 'vllm', python: '/usr/bin/python3' }],
      [{ engine: 'vllm', command: ['rm', '-rf', '/'] }],
      [],
    ]) {
      const refused = await dispatchCall(service, 'probeEngine', bad);
      expect(refused.ok).toBe(false);
      if (!refused.ok) expect(refused.error).not.toContain('\n');
    }
    expect(asked()).toEqual({ probe: 1, help: 1 });
    expect(contractArgs.probeEngine.safeParse([{ engine: 'llamacpp', where: '/usr/bin/llama-server' }]).success).toBe(
      true,
    );
  });
});
