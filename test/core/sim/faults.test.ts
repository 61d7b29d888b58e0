import { request as httpRequest, Agent } from 'node:http';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { countTokens, loadProfile, parseFault, SimOomError, startSimServer } from '../../../src/core/sim/index.js';
import {
  CHAT,
  closeAll,
  postJson,
  readTruth,
  sseEvents,
  startSim,
  stepUntil,
  tempDir,
  testProfile,
  waitFor,
} from './helpers.js';
import { VirtualClock } from './virtual-clock.js';

afterAll(closeAll);

const instant = loadProfile('instant');
const dir = tempDir();
type Obj = Record<string, unknown>;
const STREAM = {
  max_tokens: 10,
  ignore_eos: true,
  stream: true,
  stream_options: { include_usage: true, continuous_usage_stats: true },
};

describe('sim faults', () => {
  it('error-rate: HTTP 500 with a JSON error', async () => {
    const s = await startSim({ profile: instant, faults: [parseFault('error-rate=1')] });
    const res = await postJson(`${s.url}/v1/chat/completions`, CHAT('x', STREAM));
    expect(res.status).toBe(500);
    expect(((await res.json()) as Obj).error).toMatchObject({
      code: 500,
      message: expect.stringMatching(/error-rate/),
    });
  });

  it('midstream-error-rate: an error event inside the stream, then [DONE]', async () => {
    const s = await startSim({ profile: instant, faults: [parseFault('midstream-error-rate=1')] });
    const res = await postJson(`${s.url}/v1/chat/completions`, CHAT('x', STREAM));
    expect(res.status).toBe(200);
    const events = sseEvents(await res.text());
    const err = events.find((e) => e.json && (e.json as Obj).error);
    expect(err).toBeDefined();
    expect(events.at(-1)!.raw).toBe('[DONE]');
    const tokens =
      events.filter((e) => e.json && (e.json as Obj).choices && ((e.json as Obj).choices as Obj[]).length > 0).length -
      1;
    expect(tokens).toBe(5); // half of max_tokens, then the error
  });

  it('malformed-rate: one broken SSE line, inserted without losing a token', async () => {
    const s = await startSim({ profile: instant, faults: [parseFault('malformed-rate=1')] });
    const events = sseEvents(await (await postJson(`${s.url}/v1/completions`, { prompt: 'x', ...STREAM })).text());
    const broken = events.filter((e) => e.json === null && e.raw !== '[DONE]');
    expect(broken).toHaveLength(1);
    const usage = events.map((e) => (e.json as Obj | null)?.usage as Obj | undefined).filter(Boolean);
    expect(usage.at(-1)).toMatchObject({ completion_tokens: 10 });
    const text = events.map((e) => ((e.json as Obj | null)?.choices as Obj[] | undefined)?.[0]?.text ?? '').join('');
    expect(countTokens(text)).toBe(10);
  });

  it('buffered: every chunk is written at the end, at one instant', async () => {
    const truthFile = join(dir, 'buffered.jsonl');
    const s = await startSim({ profile: testProfile(), truthFile, faults: [parseFault('buffered')] });
    const events = sseEvents(await (await postJson(`${s.url}/v1/chat/completions`, CHAT('x', STREAM))).text());
    expect(events.at(-1)!.raw).toBe('[DONE]');
    await s.close();
    const [t] = readTruth(truthFile);
    expect(t!.chunks).toHaveLength(10);
    expect(new Set(t!.chunks.map((c) => c[0])).size).toBe(1);
    expect(t!.firstTokenNs).toBe(t!.chunks[0]![0]);
  });

  it('stall-ms: a pause mid-stream that long, after half the tokens (virtual time)', async () => {
    const truthFile = join(dir, 'stall.jsonl');
    const clock = new VirtualClock();
    const s = await startSim({ profile: testProfile(), truthFile, faults: [parseFault('stall-ms=300')], clock });
    const text = postJson(`${s.url}/v1/completions`, { prompt: 'x', ...STREAM }).then((r) => r.text());
    await stepUntil(
      clock,
      s,
      (c) => c.finished === 1,
      (c) => c.running + c.waiting === 1 - c.finished,
    );
    await text;
    await s.close();
    const [t] = readTruth(truthFile);
    const times = t!.chunks.map((c) => BigInt(c[0]));
    const gaps = times.slice(1).map((ns, i) => Number(ns - times[i]!) / 1e6);
    // one 5.5 ms step per token (5 ms + 0.5 ms per sequence); after 5 of the 10 tokens, 300 ms more
    const step = 5.5;
    expect(gaps).toHaveLength(9);
    gaps.forEach((g, i) => expect(g).toBeCloseTo(i === 4 ? 300 + step : step, 6));
    expect(t!.completionTokens).toBe(10);
  });

  it('slow-start: /health is 503 until the time has passed, then 200 (virtual time)', async () => {
    const clock = new VirtualClock();
    const s = await startSim({ profile: instant, faults: [parseFault('slow-start=400')], clock });
    expect((await fetch(`${s.url}/health`)).status).toBe(503);
    clock.advance(399);
    expect((await fetch(`${s.url}/health`)).status).toBe(503);
    clock.advance(1);
    expect((await fetch(`${s.url}/health`)).status).toBe(200);
  });

  it("oom-on-start: logs the engine's own OOM line and fails to start", async () => {
    const lines: string[] = [];
    await expect(
      startSimServer({ profile: instant, faults: [parseFault('oom-on-start')], log: (l) => lines.push(l) }),
    ).rejects.toBeInstanceOf(SimOomError);
    expect(lines.join('\n')).toMatch(/No available memory for the cache blocks/);
    expect(lines.join('\n')).not.toMatch(/GPU KV cache size/);
    const sg: string[] = [];
    await expect(
      startSimServer({
        profile: instant,
        mimic: 'sglang',
        faults: [parseFault('oom-on-start')],
        log: (l) => sg.push(l),
      }),
    ).rejects.toThrow(/Not enough memory\. Please try to increase --mem-fraction-static/);
  });

  it('close-after-stream: the connection closes after every streamed response', async () => {
    const s = await startSim({ profile: instant, faults: [parseFault('close-after-stream')] });
    const agent = new Agent({ keepAlive: true });
    const result = await new Promise<{ connection: string | undefined; closed: boolean }>((resolve, reject) => {
      const req = httpRequest(
        `${s.url}/v1/completions`,
        { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
        (res) => {
          res.resume();
          res.on('end', () => {
            req.socket?.once('close', () => resolve({ connection: res.headers.connection, closed: true }));
          });
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ prompt: 'x', ...STREAM }));
    });
    agent.destroy();
    expect(result).toEqual({ connection: 'close', closed: true });
  });

  it('crash-after: the engine dies after N requests (onCrash), cutting requests in flight (virtual time)', async () => {
    let crashed = 0;
    const clock = new VirtualClock();
    const s = await startSimServer({
      profile: testProfile(),
      faults: [parseFault('crash-after=2')],
      onCrash: () => crashed++,
      clock,
    });
    try {
      const short = { prompt: 'x', max_tokens: 2, ignore_eos: true };
      const first = postJson(`${s.url}/v1/completions`, short).then((r) => r.json());
      await stepUntil(
        clock,
        s,
        (c) => c.finished === 1,
        (c) => c.running + c.waiting === 1 - c.finished,
      );
      await first;
      // A long stream and a short request in the engine together; the long one cannot finish
      // before the crash, whatever the machine's speed, since virtual time stops once the short one is done.
      const slow = postJson(`${s.url}/v1/completions`, { ...short, max_tokens: 400, stream: true }).then((r) =>
        r.text(),
      );
      const third = postJson(`${s.url}/v1/completions`, short).then((r) => r.json());
      await stepUntil(
        clock,
        s,
        (c) => c.finished === 2,
        (c) => c.running + c.waiting === 3 - c.finished,
      );
      await third;
      await expect(slow).rejects.toThrow();
      await waitFor(() => crashed === 1, 'onCrash');
      await expect(fetch(`${s.url}/v1/models`)).rejects.toThrow();
    } finally {
      await s.close();
    }
  });
});
