import { formOf } from './form-of.js';
import { describe, expect, it } from 'vitest';
import type { EngineDetection, EngineProbeRequest } from '../../src/shared/contract.js';
import {
  createEngineProber,
  detectionLine,
  installedQuantizations,
  type DetectionState,
} from '../../src/renderer/lib/engine-detection.js';
import { probeField, probeRequest } from '../../src/renderer/lib/run-form.js';

/** A hand-driven timer: the test says when the quiet delay has passed. */
function manualTimers(): {
  setTimer: (fn: () => void, ms: number) => unknown;
  clearTimer: (h: unknown) => void;
  fire: () => void;
  pending: () => number;
} {
  const timers = new Map<number, () => void>();
  let next = 1;
  return {
    setTimer: (fn) => {
      timers.set(next, fn);
      return next++;
    },
    clearTimer: (h) => timers.delete(h as number),
    fire: () => {
      const fns = [...timers.values()];
      timers.clear();
      for (const fn of fns) fn();
    },
    pending: () => timers.size,
  };
}

/** A probe whose answers the test hands out, one per request, in any order. */
function manualProbe(): {
  probe: (r: EngineProbeRequest) => Promise<EngineDetection>;
  asked: EngineProbeRequest[];
  answer: (i: number, d: Partial<EngineDetection>) => void;
  fail: (i: number, message: string) => void;
} {
  const asked: EngineProbeRequest[] = [];
  const settle: Array<{ resolve: (d: EngineDetection) => void; reject: (e: Error) => void }> = [];
  return {
    asked,
    probe: (r) =>
      new Promise((resolve, reject) => {
        asked.push(r);
        settle.push({ resolve, reject });
      }),
    answer: (i, d) => settle[i]!.resolve({ engine: 'vllm', name: 'vLLM', probed: true, found: true, ...d }),
    fail: (i, message) => settle[i]!.reject(new Error(message)),
  };
}

const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('the form asks probeEngine for what its fields say', () => {
  it('the engine with its shown Python or llama-server field; nothing for an attached server', () => {
    const form = formOf({ engine: 'vllm', python: ' /venv/bin/python ', 'llama-server': '/opt/llama' });
    expect(probeField(form)?.flag).toBe('python');
    expect(probeRequest(form)).toEqual({ engine: 'vllm', where: '/venv/bin/python' });
    expect(probeRequest(formOf({ python: '' }, form))).toEqual({ engine: 'vllm' });
    expect(probeField(formOf({ engine: 'llamacpp' }, form))?.flag).toBe('llama-server');
    expect(probeRequest(formOf({ engine: 'llamacpp' }, form))).toEqual({ engine: 'llamacpp', where: '/opt/llama' });
    expect(probeField(formOf({ engine: 'sim' }, form))).toBeUndefined();
    expect(probeRequest(formOf({ engine: 'sim' }, form))).toEqual({ engine: 'sim' });
    expect(probeRequest(formOf({ engine: 'attach' }, form))).toBeNull();
  });
});

describe('the debounced engine look-up', () => {
  it('asks once the field has been still, only for the newest request', async () => {
    const timers = manualTimers();
    const p = manualProbe();
    const states: DetectionState[] = [];
    const prober = createEngineProber(p.probe, (s) => states.push(s), timers);
    prober.update({ engine: 'vllm', where: '/v' });
    prober.update({ engine: 'vllm', where: '/ve' });
    prober.update({ engine: 'vllm', where: '/venv' });
    expect(timers.pending()).toBe(1);
    expect(p.asked).toEqual([]);
    timers.fire();
    expect(p.asked).toEqual([{ engine: 'vllm', where: '/venv' }]);
    // The same request again (a re-render) asks nothing.
    prober.update({ engine: 'vllm', where: '/venv' });
    expect(timers.pending()).toBe(0);
    p.answer(0, { version: '0.11.0', quantizations: ['awq', 'fp8'] });
    await flush();
    const last = states.at(-1)!;
    expect(last.state).toBe('done');
    expect(detectionLine(last, 'vLLM')).toEqual({
      tone: 'ok',
      text: 'vLLM 0.11.0',
      detail: '2 quantization methods in its --help',
    });
    expect(installedQuantizations(last, 'vllm')).toEqual(['awq', 'fp8']);
    expect(installedQuantizations(last, 'sglang')).toBeUndefined();
  });

  it('an answer to an older request is dropped; a newer one shows', async () => {
    const timers = manualTimers();
    const p = manualProbe();
    const states: DetectionState[] = [];
    const prober = createEngineProber(p.probe, (s) => states.push(s), timers);
    prober.update({ engine: 'vllm', where: '/old' });
    timers.fire();
    prober.update({ engine: 'sglang', where: '/old' });
    timers.fire();
    p.answer(1, { engine: 'sglang', name: 'SGLang', version: '0.5.2' });
    await flush();
    p.answer(0, { version: '0.11.0' });
    await flush();
    expect(detectionLine(states.at(-1)!, 'SGLang')?.text).toBe('SGLang 0.5.2');
    prober.update(null);
    expect(states.at(-1)).toEqual({ state: 'idle' });
    expect(detectionLine(states.at(-1)!, 'x')).toBeNull();
  });

  it('asks again after a short wait when the service was busy with other look-ups', async () => {
    const timers = manualTimers();
    const p = manualProbe();
    const states: DetectionState[] = [];
    const prober = createEngineProber(p.probe, (s) => states.push(s), timers);
    prober.update({ engine: 'vllm', where: '/venv' });
    timers.fire();
    p.answer(0, { probed: false, found: false, busy: true, message: '4 engine look-ups are running: try again' });
    await flush();
    // Still looking, with a retry pending: the busy answer is not the form's last word.
    expect(detectionLine(states.at(-1)!, 'vLLM')).toEqual({ tone: 'busy', text: 'looking for vLLM…' });
    expect(timers.pending()).toBe(1);
    timers.fire();
    expect(p.asked).toEqual([
      { engine: 'vllm', where: '/venv' },
      { engine: 'vllm', where: '/venv' },
    ]);
    p.answer(1, { version: '0.11.0' });
    await flush();
    expect(detectionLine(states.at(-1)!, 'vLLM')?.text).toBe('vLLM 0.11.0');
    // A retry pending when the field changes is dropped with it.
    prober.update({ engine: 'sglang' });
    timers.fire();
    p.answer(2, { probed: false, found: false, busy: true });
    await flush();
    prober.update(null);
    expect(timers.pending()).toBe(0);
  });

  it('a failed call says so in one line; a disposed prober reports nothing', async () => {
    const timers = manualTimers();
    const p = manualProbe();
    const states: DetectionState[] = [];
    const prober = createEngineProber(p.probe, (s) => states.push(s), timers);
    prober.update({ engine: 'vllm' });
    expect(detectionLine(states.at(-1)!, 'vLLM')).toEqual({ tone: 'busy', text: 'looking for vLLM…' });
    timers.fire();
    p.fail(0, 'the connection to servebench was lost');
    await flush();
    expect(detectionLine(states.at(-1)!, 'vLLM')).toEqual({
      tone: 'bad',
      text: 'could not look for vLLM: the connection to servebench was lost',
    });
    prober.update({ engine: 'sglang' });
    timers.fire();
    prober.dispose();
    const seen = states.length;
    p.answer(1, {});
    await flush();
    expect(states).toHaveLength(seen);
  });
});

describe('what the form says of an answer', () => {
  const done = (d: Partial<EngineDetection>): DetectionState => ({
    state: 'done',
    request: { engine: 'vllm' },
    detection: { engine: 'vllm', name: 'vLLM', probed: true, found: true, ...d },
  });

  it('not found: the install hint, then why and the fix', () => {
    const line = detectionLine(
      done({
        found: false,
        installHint: 'pip install vllm',
        message: "vLLM is not installed for 'python3'",
        fix: 'install it with `pip install vllm`',
      }),
      'vLLM',
    );
    expect(line).toEqual({
      tone: 'bad',
      text: 'not found: pip install vllm',
      detail: "vLLM is not installed for 'python3'; install it with `pip install vllm`",
    });
    expect(installedQuantizations(done({ found: false, quantizations: ['awq'] }), 'vllm')).toBeUndefined();
  });

  it("the simulator: its module's note; an unread list leaves the field free text", () => {
    const sim = detectionLine(
      done({ probed: false, found: true, message: 'the built-in simulator: nothing to install, no GPU needed' }),
      'Simulator',
    );
    expect(sim).toEqual({ tone: 'info', text: 'the built-in simulator: nothing to install, no GPU needed' });
    expect(installedQuantizations(done({ version: '0.11.0' }), 'vllm')).toBeUndefined();
    expect(installedQuantizations(done({ quantizations: [] }), 'vllm')).toBeUndefined();
  });
});
