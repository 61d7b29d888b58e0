import { afterAll, describe, expect, it } from 'vitest';
import { countChatTokens, countTokens, loadProfile, OUTPUT_WORDS } from '../../../src/core/sim/index.js';
import { applyOverrides } from '../../../src/core/sim/profile.js';
import { CHAT, closeAll, postJson, sseEvents, startSim } from './helpers.js';

afterAll(closeAll);

const instant = loadProfile('instant');
type Obj = Record<string, unknown>;
const choice = (e: unknown): Obj => ((e as Obj).choices as Obj[])[0]!;

describe('sim, vLLM mimic', () => {
  it('answers /health, /v1/models, /version and 404/405 like FastAPI', async () => {
    const s = await startSim({ profile: instant, mimic: 'vllm', model: 'm1' });
    expect(s.url).toBe(`http://127.0.0.1:${s.port}`);
    expect((await fetch(`${s.url}/health`)).status).toBe(200);
    const models = (await (await fetch(`${s.url}/v1/models`)).json()) as Obj;
    expect(models).toMatchObject({
      object: 'list',
      data: [{ id: 'm1', object: 'model', owned_by: 'vllm', max_model_len: instant.maxModelLen }],
    });
    expect(await (await fetch(`${s.url}/version`)).json()).toEqual({
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
    });
    const nf = await fetch(`${s.url}/nope`);
    expect(nf.status).toBe(404);
    expect(await nf.json()).toEqual({ detail: 'Not Found' });
    expect((await fetch(`${s.url}/v1/completions`)).status).toBe(405);
    // vLLM refuses a model it does not serve
    const wrong = await postJson(`${s.url}/v1/completions`, { model: 'other', prompt: 'x', max_tokens: 1 });
    expect(wrong.status).toBe(404);
    expect(((await wrong.json()) as Obj).error).toMatchObject({
      message: 'The model `other` does not exist.',
      code: 404,
    });
  });

  it('serves POST /tokenize in vLLM shape, matching usage.prompt_tokens', async () => {
    const s = await startSim({ profile: instant, mimic: 'vllm', model: 'm1' });
    const t = (await (
      await postJson(`${s.url}/tokenize`, { model: 'm1', prompt: 'Hello there, world' })
    ).json()) as Obj;
    expect(t).toMatchObject({ count: countTokens('Hello there, world') + 1, max_model_len: instant.maxModelLen });
    expect(t.tokens).toHaveLength(t.count as number);
    const messages = [{ role: 'user', content: 'Hello there, world' }];
    const tc = (await (await postJson(`${s.url}/tokenize`, { model: 'm1', messages })).json()) as Obj;
    expect(tc.count).toBe(countChatTokens(messages));
    const chat = (await (
      await postJson(`${s.url}/v1/chat/completions`, { model: 'm1', messages, max_tokens: 3 })
    ).json()) as Obj;
    expect((chat.usage as Obj).prompt_tokens).toBe(tc.count);
    const comp = (await (
      await postJson(`${s.url}/v1/completions`, { model: 'm1', prompt: 'Hello there, world', max_tokens: 3 })
    ).json()) as Obj;
    expect((comp.usage as Obj).prompt_tokens).toBe(t.count);
    expect((await postJson(`${s.url}/tokenize`, { nothing: true })).status).toBe(400);
  });

  it('streams chat: role-only first chunk, one token per chunk, continuous usage, final usage chunk, [DONE]', async () => {
    const s = await startSim({ profile: instant, mimic: 'vllm' });
    const res = await postJson(
      `${s.url}/v1/chat/completions`,
      CHAT('Hi there', {
        max_tokens: 6,
        ignore_eos: true,
        stream: true,
        stream_options: { include_usage: true, continuous_usage_stats: true },
      }),
    );
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const events = sseEvents(await res.text());
    expect(events.at(-1)!.raw).toBe('[DONE]');
    const json = events.slice(0, -1).map((e) => e.json as Obj);
    expect(choice(json[0]).delta).toEqual({ role: 'assistant', content: '' });
    const content = json.slice(1, -1);
    expect(content).toHaveLength(6);
    const prompt = countChatTokens([{ role: 'user', content: 'Hi there' }]);
    content.forEach((e, i) => {
      expect(e.object).toBe('chat.completion.chunk');
      expect(e.usage).toEqual({ prompt_tokens: prompt, completion_tokens: i + 1, total_tokens: prompt + i + 1 });
      expect(countTokens((choice(e).delta as Obj).content as string)).toBe(1);
      expect(choice(e).finish_reason).toBe(i === 5 ? 'length' : null);
    });
    const last = json.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: prompt, completion_tokens: 6, total_tokens: prompt + 6 });
  });

  it('gives every response its own id, also when zero-delay mode reuses a prebuilt body', async () => {
    const s = await startSim({ profile: instant, mimic: 'vllm' });
    const ids: string[] = [];
    for (let i = 0; i < 70; i++) {
      const events = sseEvents(
        await (
          await postJson(
            `${s.url}/v1/chat/completions`,
            CHAT('same', { max_tokens: 4, ignore_eos: true, stream: true }),
          )
        ).text(),
      );
      const own = new Set(events.slice(0, -1).map((e) => (e.json as Obj).id as string));
      expect(own.size).toBe(1);
      ids.push([...own][0]!);
      expect(events.slice(1, -1).map((e) => countTokens((choice(e.json).delta as Obj).content as string))).toEqual([
        1, 1, 1, 1,
      ]);
    }
    expect(new Set(ids).size).toBe(70);
  });

  it('streams completions without usage unless asked, and answers non-streaming requests in one body', async () => {
    const s = await startSim({ profile: instant, mimic: 'vllm' });
    const events = sseEvents(
      await (
        await postJson(`${s.url}/v1/completions`, { prompt: 'Once', max_tokens: 4, ignore_eos: true, stream: true })
      ).text(),
    );
    expect(events.map((e) => e.raw).at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => e.json as Obj);
    expect(chunks).toHaveLength(4);
    for (const c of chunks) {
      expect(c.object).toBe('text_completion');
      expect(c.usage).toBeUndefined();
    }
    expect(chunks.map((c) => choice(c).text).join('')).toBe(OUTPUT_WORDS.slice(0, 4).join(''));
    const body = (await (
      await postJson(`${s.url}/v1/chat/completions`, CHAT('Hi', { max_tokens: 5, ignore_eos: true }))
    ).json()) as Obj;
    expect(body.object).toBe('chat.completion');
    const msg = choice(body).message as Obj;
    expect(msg.role).toBe('assistant');
    expect(countTokens(msg.content as string)).toBe(5);
    expect(choice(body).finish_reason).toBe('length');
    expect((body.usage as Obj).completion_tokens).toBe(5);
  });

  it('stops early with finish_reason stop unless ignore_eos, never before min_tokens', async () => {
    const profile = applyOverrides(instant, { 'eos-prob': 1 }, 'test');
    const s = await startSim({ profile, mimic: 'vllm' });
    const early = (await (
      await postJson(`${s.url}/v1/completions`, { prompt: 'x', max_tokens: 50, min_tokens: 7 })
    ).json()) as Obj;
    expect(choice(early).finish_reason).toBe('stop');
    expect((early.usage as Obj).completion_tokens).toBe(7);
    const full = (await (
      await postJson(`${s.url}/v1/completions`, { prompt: 'x', max_tokens: 50, ignore_eos: true })
    ).json()) as Obj;
    expect(choice(full).finish_reason).toBe('length');
    expect((full.usage as Obj).completion_tokens).toBe(50);
  });

  it('rejects bad requests with an OpenAI-style error', async () => {
    const s = await startSim({ profile: instant, mimic: 'vllm' });
    const tooLong = await postJson(`${s.url}/v1/completions`, { prompt: 'x', max_tokens: instant.maxModelLen + 1 });
    expect(tooLong.status).toBe(400);
    expect(((await tooLong.json()) as Obj).error).toMatchObject({
      message: expect.stringMatching(/maximum context length is \d+ tokens/),
    });
    expect((await postJson(`${s.url}/v1/chat/completions`, { messages: 'nope' })).status).toBe(400);
    expect((await postJson(`${s.url}/v1/completions`, { prompt: 'x', max_tokens: 2, min_tokens: 5 })).status).toBe(400);
    const bad = await fetch(`${s.url}/v1/completions`, { method: 'POST', body: '{not json' });
    expect(bad.status).toBe(400);
  });

  it('exposes vLLM metric names with model_name labels', async () => {
    const s = await startSim({ profile: instant, mimic: 'vllm', model: 'm1' });
    await postJson(`${s.url}/v1/completions`, { prompt: 'x', max_tokens: 3, ignore_eos: true });
    const text = await (await fetch(`${s.url}/metrics`)).text();
    for (const name of [
      'vllm:num_requests_running',
      'vllm:num_requests_waiting',
      'vllm:kv_cache_usage_perc',
      'vllm:num_preemptions_total',
      'vllm:prompt_tokens_total',
      'vllm:generation_tokens_total',
      'vllm:prefix_cache_hits_total',
    ]) {
      expect(text).toMatch(new RegExp(`^${name}\\{engine="0",model_name="m1"\\} [\\d.]+$`, 'm'));
    }
    expect(text).toMatch(/^vllm:generation_tokens_total\{[^}]*\} 3\.0$/m);
    expect(text).toMatch(/^vllm:time_to_first_token_seconds_bucket\{[^}]*le="\+Inf"\} 1\.0$/m);
    expect(text).toMatch(/^vllm:time_to_first_token_seconds_count\{[^}]*\} 1\.0$/m);
  });
});

describe('sim, SGLang mimic', () => {
  it('answers /health, /health_generate, /model_info, /server_info (its /tokenize: sim-sglang-tokenize.test.ts)', async () => {
    const s = await startSim({ profile: instant, mimic: 'sglang', model: 'm2' });
    expect((await fetch(`${s.url}/health`)).status).toBe(200);
    expect((await fetch(`${s.url}/health_generate`)).status).toBe(200);
    expect(await (await fetch(`${s.url}/model_info`)).json()).toMatchObject({ model_path: 'm2', is_generation: true });
    expect(await (await fetch(`${s.url}/server_info`)).json()).toMatchObject({
      max_running_requests: instant.maxNumSeqs,
      context_length: instant.maxModelLen,
      version: expect.any(String),
    });
    expect((await fetch(`${s.url}/version`)).status).toBe(404);
    const models = (await (await fetch(`${s.url}/v1/models`)).json()) as Obj;
    expect((models.data as Obj[])[0]).toMatchObject({ id: 'm2', owned_by: 'sglang' });
  });

  it('streams native /generate with cumulative text and meta_info', async () => {
    const s = await startSim({ profile: instant, mimic: 'sglang' });
    const res = await postJson(`${s.url}/generate`, {
      text: 'Hello',
      sampling_params: { max_new_tokens: 5, ignore_eos: true },
      stream: true,
    });
    const events = sseEvents(await res.text());
    expect(events.at(-1)!.raw).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => e.json as Obj);
    expect(chunks).toHaveLength(5);
    chunks.forEach((c, i) => {
      expect(c.text).toBe(OUTPUT_WORDS.slice(0, i + 1).join(''));
      expect(c.meta_info).toMatchObject({ prompt_tokens: countTokens('Hello') + 1, completion_tokens: i + 1 });
    });
    expect((chunks[4]!.meta_info as Obj).finish_reason).toEqual({ type: 'length', length: 5 });
    expect((chunks[0]!.meta_info as Obj).finish_reason).toBeNull();
    const body = (await (
      await postJson(`${s.url}/generate`, { text: 'Hello', sampling_params: { max_new_tokens: 3, ignore_eos: true } })
    ).json()) as Obj;
    expect(countTokens(body.text as string)).toBe(3);
    expect(body.meta_info).toMatchObject({ completion_tokens: 3, finish_reason: { type: 'length', length: 3 } });
    // and the OpenAI endpoints, serving any model name as SGLang does
    const chat = (await (
      await postJson(`${s.url}/v1/chat/completions`, CHAT('Hi', { model: 'anything', max_tokens: 2, ignore_eos: true }))
    ).json()) as Obj;
    expect((chat.usage as Obj).completion_tokens).toBe(2);
  });

  it("writes usage in SGLang's shape: reasoning_tokens at the top, prompt_tokens_details null, matched_stop", async () => {
    const s = await startSim({ profile: instant, mimic: 'sglang' });
    const events = sseEvents(
      await (
        await postJson(
          `${s.url}/v1/chat/completions`,
          CHAT('Hi', {
            max_tokens: 3,
            ignore_eos: true,
            stream: true,
            stream_options: { include_usage: true, continuous_usage_stats: true },
          }),
        )
      ).text(),
    );
    expect(events.at(-1)!.raw).toBe('[DONE]');
    const json = events.slice(0, -1).map((e) => e.json as Obj);
    const prompt = countChatTokens([{ role: 'user', content: 'Hi' }]);
    const usage = (completion: number, reasoning = 0): Obj => ({
      prompt_tokens: prompt,
      total_tokens: prompt + completion,
      completion_tokens: completion,
      prompt_tokens_details: null,
      reasoning_tokens: reasoning,
    });
    // The final usage chunk: no choices, SGLang's UsageInfo with every field.
    expect(json.at(-1)).toMatchObject({ object: 'chat.completion.chunk', choices: [], usage: usage(3) });
    expect(Object.keys(json.at(-1)!.usage as Obj)).toEqual(Object.keys(usage(3)));
    // Continuous usage has the same shape; the finish chunk names matched_stop, not vLLM's stop_reason.
    expect(json.at(-3)!.usage).toEqual(usage(3));
    expect(choice(json.at(-2))).toMatchObject({ finish_reason: 'length', matched_stop: null });
    expect(choice(json.at(-2))).not.toHaveProperty('stop_reason');
    // Non-streaming: the same usage; an early EOS stops on the EOS id.
    const eos = applyOverrides(instant, { 'eos-prob': 1 }, 'test');
    const e = await startSim({ profile: eos, mimic: 'sglang' });
    const body = (await (await postJson(`${e.url}/v1/chat/completions`, CHAT('Hi', { max_tokens: 5 }))).json()) as Obj;
    expect(body.usage).toEqual(usage(1));
    expect(choice(body)).toMatchObject({ finish_reason: 'stop', matched_stop: 2 });
    // Reasoning mode: the count sits at the top of usage, where SGLang puts it.
    const thinking = applyOverrides(instant, { 'reasoning-tokens': 2 }, 'test');
    const r = await startSim({ profile: thinking, mimic: 'sglang' });
    const reasoned = sseEvents(
      await (
        await postJson(
          `${r.url}/v1/chat/completions`,
          CHAT('Hi', { max_tokens: 4, ignore_eos: true, stream: true, stream_options: { include_usage: true } }),
        )
      ).text(),
    );
    expect((reasoned.at(-2)!.json as Obj).usage).toEqual(usage(4, 2));
  });

  it('reports cached prompt tokens as vLLM and SGLang do with their cache-report flags, and not without', async () => {
    const cached = applyOverrides(instant, { 'prefix-caching': 'true' }, 'test');
    const long = Array.from({ length: 80 }, (_, i) => `word${i}`).join(' ');
    const usageOf = async (url: string): Promise<Obj> => {
      const events = sseEvents(
        await (
          await postJson(
            `${url}/v1/chat/completions`,
            CHAT(long, { max_tokens: 2, ignore_eos: true, stream: true, stream_options: { include_usage: true } }),
          )
        ).text(),
      );
      return (events.at(-2)!.json as Obj).usage as Obj;
    };
    // vLLM with --enable-prompt-tokens-details: no details while nothing was cached, then the cached blocks.
    const v = await startSim({ profile: cached, mimic: 'vllm', cacheReport: true });
    expect(await usageOf(v.url)).not.toHaveProperty('prompt_tokens_details');
    const again = await usageOf(v.url);
    const hit = (again.prompt_tokens_details as Obj).cached_tokens as number;
    expect(hit).toBeGreaterThan(0);
    expect(hit % 16).toBe(0);
    expect(hit).toBeLessThanOrEqual(again.prompt_tokens as number);
    // SGLang with --enable-cache-report: the details every time, 0 included.
    const g = await startSim({ profile: cached, mimic: 'sglang', cacheReport: true });
    expect((await usageOf(g.url)).prompt_tokens_details).toEqual({ cached_tokens: 0 });
    expect((await usageOf(g.url)).prompt_tokens_details).toEqual({ cached_tokens: hit });
    // Without the flags: vLLM says nothing, SGLang null.
    const plain = await startSim({ profile: cached, mimic: 'vllm' });
    await usageOf(plain.url);
    expect(await usageOf(plain.url)).not.toHaveProperty('prompt_tokens_details');
  });

  it("streams chat in SGLang's order: role, content, a finish-only chunk, usage with no choices, [DONE]", async () => {
    const s = await startSim({ profile: instant, mimic: 'sglang' });
    const stream = async (base: string, path: string, body: Obj, withUsage: boolean): Promise<Obj[]> => {
      const options = withUsage ? { stream_options: { include_usage: true, continuous_usage_stats: true } } : {};
      const events = sseEvents(await (await postJson(`${base}${path}`, { ...body, ...options })).text());
      expect(events.at(-1)!.raw).toBe('[DONE]');
      return events.slice(0, -1).map((e) => e.json as Obj);
    };
    const prompt = countChatTokens([{ role: 'user', content: 'Hi there' }]);
    const usage = (completion: number): Obj => ({
      prompt_tokens: prompt,
      total_tokens: prompt + completion,
      completion_tokens: completion,
      prompt_tokens_details: null,
      reasoning_tokens: 0,
    });
    // Zero-delay mode writes a whole prebuilt body and a timed one writes per step: both in the same order.
    const timed = applyOverrides(instant, { 'step-base-ms': 1 }, 'test');
    const t = await startSim({ profile: timed, mimic: 'sglang' });
    for (const base of [s.url, t.url]) {
      const chat = CHAT('Hi there', { max_tokens: 4, ignore_eos: true, stream: true });
      const json = await stream(base, '/v1/chat/completions', chat, true);
      expect(json).toHaveLength(1 + 4 + 1 + 1);
      // The role chunk: no usage (build_sse_content is called without it).
      expect(choice(json[0])).toEqual({
        index: 0,
        delta: { role: 'assistant', content: '' },
        logprobs: null,
        finish_reason: null,
        matched_stop: null,
      });
      expect(json[0]).not.toHaveProperty('usage');
      // Content chunks: one token each, continuous usage, never a finish_reason.
      json.slice(1, 5).forEach((e, i) => {
        expect(countTokens((choice(e).delta as Obj).content as string)).toBe(1);
        expect(choice(e)).toMatchObject({ finish_reason: null, matched_stop: null });
        expect(e.usage).toEqual(usage(i + 1));
      });
      // The finish chunk: an empty delta, finish_reason and matched_stop, no usage.
      expect(choice(json[5])).toEqual({
        index: 0,
        delta: {},
        logprobs: null,
        finish_reason: 'length',
        matched_stop: null,
      });
      expect(json[5]).not.toHaveProperty('usage');
      expect(json[6]).toMatchObject({ object: 'chat.completion.chunk', choices: [], usage: usage(4) });
    }
    // Without include_usage: role, content, finish, [DONE].
    const plain = await stream(
      s.url,
      '/v1/chat/completions',
      CHAT('Hi there', { max_tokens: 2, ignore_eos: true, stream: true }),
      false,
    );
    expect(plain.map((e) => Object.keys(choice(e).delta as Obj))).toEqual([
      ['role', 'content'],
      ['content'],
      ['content'],
      [],
    ]);
    expect(plain.every((e) => !('usage' in e))).toBe(true);
    // Completions: the finish_reason rides on the last text chunk; the usage chunk drops its null fields.
    const text = await stream(
      s.url,
      '/v1/completions',
      { prompt: 'Once', max_tokens: 3, ignore_eos: true, stream: true },
      true,
    );
    expect(text).toHaveLength(4);
    expect(text.slice(0, 3).map((e) => choice(e).finish_reason)).toEqual([null, null, 'length']);
    expect(choice(text[2])).toMatchObject({ matched_stop: null });
    const once = countTokens('Once') + 1;
    expect(text[3]).toMatchObject({ object: 'text_completion', choices: [] });
    expect(text[3]!.usage).toEqual({
      prompt_tokens: once,
      total_tokens: once + 3,
      completion_tokens: 3,
      reasoning_tokens: 0,
    });
  });

  it('exposes SGLang metric names', async () => {
    const s = await startSim({ profile: instant, mimic: 'sglang', model: 'm2' });
    await postJson(`${s.url}/generate`, { text: 'x', sampling_params: { max_new_tokens: 2, ignore_eos: true } });
    const text = await (await fetch(`${s.url}/metrics`)).text();
    for (const name of [
      'sglang:num_running_reqs',
      'sglang:num_queue_reqs',
      'sglang:token_usage',
      'sglang:cache_hit_rate',
      'sglang:gen_throughput',
    ]) {
      expect(text).toMatch(new RegExp(`^${name}\\{model_name="m2"\\} [\\d.]+$`, 'm'));
    }
    expect(text).not.toMatch(/vllm:/);
  });
});

describe('sim, OpenAI mimic', () => {
  it('has only the two OpenAI endpoints and /v1/models', async () => {
    const s = await startSim({ profile: instant, mimic: 'openai', model: 'm3' });
    for (const path of ['/health', '/metrics', '/version', '/model_info'])
      expect((await fetch(`${s.url}${path}`)).status).toBe(404);
    expect((await postJson(`${s.url}/tokenize`, { prompt: 'x' })).status).toBe(404);
    expect((await postJson(`${s.url}/generate`, { text: 'x' })).status).toBe(404);
    expect((await fetch(`${s.url}/v1/models`)).status).toBe(200);
    const c = (await (
      await postJson(`${s.url}/v1/completions`, { model: 'm3', prompt: 'x', max_tokens: 2, ignore_eos: true })
    ).json()) as Obj;
    expect((c.usage as Obj).completion_tokens).toBe(2);
    const events = sseEvents(
      await (
        await postJson(`${s.url}/v1/chat/completions`, CHAT('x', { max_tokens: 2, ignore_eos: true, stream: true }))
      ).text(),
    );
    expect(events.at(-1)!.raw).toBe('[DONE]');
  });
});
