import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBenchmark } from '../../src/core/benchmark.js';
import { createMonoClock } from '../../src/core/clock.js';
import type { RunningServer, StartServer } from '../../src/core/servers/types.js';
import { startEngineScraper, type EngineStatus } from '../../src/core/telemetry/engine-metrics.js';
import { createExecaRunner, type CommandRunner } from '../../src/core/telemetry/exec.js';
import { readGpuSnapshot } from '../../src/core/telemetry/gpu-snapshot.js';
import { undiciGetText } from '../../src/core/telemetry/http-get.js';
import { startNvidiaSmiLoop } from '../../src/core/telemetry/nvidia-smi-loop.js';
import { parsePrometheusTextSliced } from '../../src/core/telemetry/prometheus-parser.js';
import { createTelemetryRecorder } from '../../src/core/telemetry/recorder.js';
import { BenchConfigSchema } from '../../src/shared/config.js';
import type { RequestRecord } from '../../src/shared/request-record.js';
import type { Check, LevelResult, RunRecord } from '../../src/shared/run-record.js';
import { startLyingServer, type LyingServer } from '../fakes/lying-usage-server.js';
import { startMetricsServer, type MetricsMode, type MetricsServer } from '../fakes/hostile-metrics-server.js';

const HOSTILE_SMI = fileURLToPath(new URL('../fakes/nvidia-smi-hostile.mjs', import.meta.url));
const CLI = fileURLToPath(new URL('../../bin/servebench.js', import.meta.url));
type SmiMode = 'hang' | 'hang-loop' | 'flood-loop' | 'flood-query' | 'impossible' | 'impossible-facts';

let out: string;
const cleanups: Array<() => Promise<void>> = [];
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'sb-telemetry-'));
});
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
  await rm(out, { recursive: true, force: true });
});

async function llm(): Promise<LyingServer> {
  const server = await startLyingServer('honest');
  cleanups.push(() => server.close());
  return server;
}

async function metrics(mode: MetricsMode): Promise<MetricsServer> {
  const server = await startMetricsServer(mode);
  cleanups.push(() => server.close());
  return server;
}

function smiEnv(mode: SmiMode, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, FAKE_NVSMI_HOSTILE: mode, ...extra };
}

interface Run {
  record: RunRecord;
  level: LevelResult;
  requests: RequestRecord[];
  messages: Array<{ atMs: number; text: string }>;
  check: (id: Check['id']) => Check | undefined;
}

/**
 * One level (c=2, 3 rounds of 4, 64 tokens) against an honest LLM, with the /metrics and nvidia-smi given;
 * `scrapes` gets each engine scrape's parse as [start, end] on the run clock (page read .. sample handed on).
 */
async function runWith(telemetry: {
  metricsUrl?: string;
  smi?: SmiMode;
  scrapes?: Array<[number, number]>;
}): Promise<Run> {
  const server = await llm();
  const startServer: StartServer = async () => {
    const running: RunningServer = {
      info: {
        engine: 'attach',
        baseUrl: server.url,
        model: 'liar',
        simulated: false,
        metricsUrl: telemetry.metricsUrl,
      },
      died: new Promise(() => undefined),
      exited: false,
      hasDied: () => null,
      stop: async () => undefined,
      logTail: () => [],
    };
    return running;
  };
  const result = await runBenchmark(
    BenchConfigSchema.parse({
      out,
      label: 'telemetry',
      concurrency: [2],
      inputLen: [16],
      outputLen: [64],
      rounds: 3,
      requestsPerRound: 4,
      warmup: 1,
      telemetryIntervalMs: 50,
      server: { engine: 'attach', url: server.url },
    }),
    {
      startServer,
      createTelemetry: (o) =>
        createTelemetryRecorder({
          ...o,
          onEngineSample: (sample) => {
            o.onEngineSample?.(sample);
            telemetry.scrapes?.push([sample.tMs, o.clock.nowMs()]);
          },
          engineIntervalMs: 50,
          nvidiaSmiPath: telemetry.smi ? HOSTILE_SMI : '/nonexistent/nvidia-smi',
          env: smiEnv(telemetry.smi ?? 'hang'),
        }),
    },
  );
  const record = JSON.parse(await readFile(join(result.dir, 'run.json'), 'utf8')) as RunRecord;
  const lines = (await readFile(join(result.dir, 'requests.jsonl'), 'utf8')).split('\n').filter(Boolean);
  const level = record.levels[0]!;
  return {
    record,
    level,
    requests: lines.map((l) => JSON.parse(l) as RequestRecord).filter((r) => !r.warmup),
    // The run's own messages, stamped on the run clock the request records use.
    messages: record.messages ?? [],
    check: (id) => level.checks.find((c) => c.id === id),
  };
}

describe('/metrics values an engine cannot have', () => {
  it('NaN, ±Inf, negative counts, a KV usage of 1e308, hits above queries: dropped, named, no verdict built on them', async () => {
    const page = await metrics('lies');
    const run = await runWith({ metricsUrl: page.url });
    const t = run.level.telemetry!;
    expect(t.kvUsagePeak).toBeNull();
    expect(t.runningPeak).toBeNull();
    expect(t.waitingPeak).toBeNull();
    expect(t.preemptions).toBeNull();
    expect(t.prefixCacheHits).toBeNull();
    const fields = (t.issues ?? []).filter((i) => i.code === 'impossible-value').map((i) => i.field);
    expect(new Set(fields)).toEqual(
      new Set(['running', 'waiting', 'kvUsage', 'preemptionsTotal', 'prefixCacheHitsTotal', 'generationTokensTotal']),
    );
    const preemptions = run.check('preemptions')!;
    expect(preemptions).toMatchObject({ status: 'warn', code: 'impossible-engine-values' });
    const facts = run.level.checks.flatMap((c) => Object.values(c.facts ?? {}));
    expect(facts.filter((f) => typeof f === 'number' && !Number.isFinite(f))).toEqual([]);
    expect(run.messages.map((m) => m.text).join('\n')).toMatch(
      /engine \/metrics reported an impossible KV cache usage \(1e\+308\)/,
    );
  });
});

describe('/metrics pages that would stall the client', () => {
  it.each([
    ['huge-page', 'oversized', /answered more than 8 MiB/],
    ['huge-line', 'oversized', /answered more than 8 MiB/],
    ['endless', 'oversized', /answered more than 8 MiB/],
    ['long-line', 'line-too-long', /sent a line longer than 64 KiB/],
  ] as const)('%s: read no further than the cap, dropped for good and named', async (mode, code, text) => {
    const page = await metrics(mode);
    const run = await runWith({ metricsUrl: page.url });
    // Named in the run's messages and in the level's telemetry summary.
    const dropped = run.messages.find((m) => /^engine metrics dropped: /.test(m.text))!;
    expect(dropped.text).toMatch(text);
    expect(run.level.telemetry!.issues).toContainEqual(expect.objectContaining({ source: 'engine', code }));
    expect(run.check('preemptions')).toMatchObject({ status: 'warn', code: `engine-source-${code}` });
    // Dropped for good: scraped once, never again. An oversized page is hung up on at the cap: the client stopped
    // reading it before it ended, and what the server got into the sockets is the cap plus their buffers, not the
    // gigabytes an endless body gives a reader that waits for its time-out.
    expect(page.scrapes()).toBe(1);
    if (code === 'oversized') {
      expect(page.abandoned()).toBe(1);
      expect(page.bytesSent()).toBeLessThan(32 << 20);
    }
    expect(run.level.completed).toBe(12);
  });

  it('a 6 MB page within the caps, scraped all level long: tokens are read while it is being parsed', async () => {
    const page = await metrics('big-page');
    const scrapes: Array<[number, number]> = [];
    const run = await runWith({ metricsUrl: page.url, scrapes });
    expect(run.level.telemetry!.issues).toBeUndefined();
    expect(run.level.telemetry!.runningPeak).toBe(2);
    // Causality, not timing: a parse that held the event loop would let no read happen inside it; these parses let
    // the streams' chunks be read (and stamped) while they ran.
    const reads = run.requests.flatMap((r) => r.chunks.map(([t]) => t));
    const during = reads.filter((t) => scrapes.some(([from, to]) => t > from && t < to));
    expect(scrapes.length).toBeGreaterThan(1);
    expect(during.length).toBeGreaterThan(0);
  });

  it('a page within the caps is parsed in slices: the event loop turns over while it is parsed', async () => {
    const page = 'vllm:e2e_request_latency_seconds_bucket{le="0.5",model_name="m"} 1.0\n'.repeat(100_000);
    let turns = 0;
    let parsing = true;
    const spin = (): void => {
      if (!parsing) return;
      turns++;
      setImmediate(spin);
    };
    setImmediate(spin);
    const parsed = await parsePrometheusTextSliced(page, { keep: (n) => n === 'vllm:num_requests_running' });
    parsing = false;
    expect(parsed.samples).toEqual([]);
    // About 7 MB in 64 Ki slices: the loop ran between them, never waiting for the whole page.
    expect(turns).toBeGreaterThanOrEqual(Math.floor(page.length / (64 << 10)) - 1);
  });

  it('a body that drips for ever: each scrape ends at its time-out, and after 3 in a row the source is dropped', async () => {
    const page = await metrics('drip');
    const statuses: EngineStatus[] = [];
    const dropped = new Promise<string>((resolve) => {
      const scraper = startEngineScraper({
        url: page.url,
        clock: createMonoClock(),
        get: undiciGetText,
        intervalMs: 10,
        onSample: () => undefined,
        onStatus: (s) => statuses.push(s),
        onDropped: (reason, code) => {
          expect(code).toBe('timed-out');
          resolve(reason);
        },
      });
      cleanups.push(() => scraper.stop());
    });
    expect(await dropped).toMatch(/gave no complete page within 2 s 3 times in a row/);
    expect(page.scrapes()).toBe(3);
    expect(statuses.at(-1)).toMatchObject({ available: false });
  }, 30_000);
});

describe('nvidia-smi values a GPU cannot have', () => {
  it('-273 °C, 1e308 °C, -5 MHz, a mask of all ones, 250 %: dropped and named; throttling is not failed on them', async () => {
    const run = await runWith({ smi: 'impossible' });
    const t = run.level.telemetry!;
    expect(t.samples).toBeGreaterThan(0);
    expect(t.smClockMinMhz).toBeNull();
    expect(t.tempMaxC).toBeNull();
    expect(t.throttle.thermalFraction).toBe(0);
    expect(t.throttle.unknownFraction).toBe(1);
    const fields = (t.issues ?? []).map((i) => i.field);
    expect(fields).toEqual(expect.arrayContaining(['smClockMhz', 'tempC', 'memTempC', 'utilPct', 'throttleMask']));
    const throttling = run.check('throttling')!;
    expect(throttling).toMatchObject({ status: 'warn', code: 'impossible-gpu-values' });
    // The impossible values are left out of the verdict's own figures: no clock, no temperature, no slowdown.
    expect(throttling.facts).toMatchObject({
      verdictCode: 'reasons-unknown',
      smClockMinMhz: null,
      tempMaxC: null,
      thermalFraction: 0,
    });
    expect(String(throttling.facts?.fields).split(',')).toContain('throttleMask');
    expect(run.messages.map((m) => m.text).join('\n')).toMatch(/impossible temperature\.memory \(-273 °C\)/);
  });

  it('servebench gpu shows the impossible values as unknown and names them', async () => {
    const res = await readGpuSnapshot({ nvidiaSmiPath: HOSTILE_SMI, env: smiEnv('impossible') });
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    const [sample] = res.snapshot.samples;
    expect(sample).toMatchObject({
      smClockMhz: null,
      tempC: null,
      memTempC: null,
      throttleMask: null,
      class: 'unknown',
    });
    expect(sample!.rejected).toMatchObject({ smClockMhz: '-5 MHz', memTempC: '-273 °C', throttleMask: '0xffffffff' });
  });
});

describe('nvidia-smi facts a GPU cannot have', () => {
  it('a 1e308 W power limit, -1 MiB, a 0 MHz max clock: left out of the GPU facts and named, in gpu and in a run', async () => {
    const res = await readGpuSnapshot({ nvidiaSmiPath: HOSTILE_SMI, env: smiEnv('impossible-facts') });
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    const [gpu] = res.snapshot.gpus;
    expect(gpu).toMatchObject({ powerLimitW: null, memoryMiB: null, maxSmClockMhz: null, maxMemClockMhz: null });
    expect(gpu!.rejected).toEqual(
      expect.arrayContaining(['enforced.power.limit 1e+308 W', 'memory.total -1 MiB', 'clocks.max.sm 0 MHz']),
    );
    const run = await runWith({ smi: 'impossible-facts' });
    expect(run.record.environment?.gpus?.[0]).toMatchObject({ powerLimitW: null, memoryMiB: null });
    expect(run.messages.map((m) => m.text).join('\n')).toMatch(/GPU 0 facts no GPU has, left out: .*1e\+308 W/);
  });
});

/** The real runner with every time-out cut to `ms`, so a hang is seen without waiting 15 s. */
function quickRunner(ms: number): CommandRunner {
  const real = createExecaRunner();
  return { ...real, run: (file, args, options = {}) => real.run(file, args, { ...options, timeoutMs: ms }) };
}

describe('nvidia-smi that hangs or floods', () => {
  it('a probe that hangs (SIGTERM ignored): given up after one time-out, named as a hang, the child killed', async () => {
    const log = join(out, 'calls.jsonl');
    const res = await readGpuSnapshot({
      nvidiaSmiPath: HOSTILE_SMI,
      env: smiEnv('hang', { FAKE_NVSMI_LOG: log }),
      exec: quickRunner(300),
    });
    expect(res).toMatchObject({ ok: false, reason: expect.stringMatching(/gave no answer .* it hangs/) });
    const calls = (await readFile(log, 'utf8')).split('\n').filter(Boolean);
    // One call: no field-by-field probing after a hang.
    expect(calls).toHaveLength(1);
    const { pid } = JSON.parse(calls[0]!) as { pid: number };
    expect(isAlive(pid)).toBe(false);
  });

  it('a probe that floods its output without a newline: stopped at the cap and named', async () => {
    const res = await readGpuSnapshot({ nvidiaSmiPath: HOSTILE_SMI, env: smiEnv('flood-query') });
    expect(res).toMatchObject({ ok: false, reason: expect.stringMatching(/printed more than 1 MiB for one query/) });
  });

  it('a -lms loop that floods (SIGTERM ignored): stopped at 1 MiB, dropped for good, named, the child killed', async () => {
    const log = join(out, 'calls.jsonl');
    const issues: string[] = [];
    const dropped = new Promise<void>((resolve) => {
      const recorder = createTelemetryRecorder({
        clock: createMonoClock(),
        nvidiaSmiPath: HOSTILE_SMI,
        env: smiEnv('flood-loop', { FAKE_NVSMI_LOG: log }),
        intervalMs: 50,
        clientIntervalMs: 0,
        onIssue: (i) => {
          issues.push(i.detail);
          if (i.code === 'flooding') resolve();
        },
      });
      cleanups.push(() => recorder.stop());
      void recorder.start();
    });
    await dropped;
    expect(issues.join('\n')).toMatch(/nvidia-smi printed more than 1 MiB within 2 s \(it floods its output\)/);
    const loopCall = (await readFile(log, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { pid: number; args: string[] })
      .find((c) => c.args.includes('-lms'))!;
    await cleanups.pop()!();
    expect(isAlive(loopCall.pid)).toBe(false);
  });

  it('a -lms loop that goes silent: restarted after its hang time-out, the gap named', async () => {
    const gaps = await new Promise<string>((resolve) => {
      const loop = startNvidiaSmiLoop({
        runner: createExecaRunner(),
        binary: HOSTILE_SMI,
        fields: { query: ['index', 'temperature.gpu'], canonical: ['index', 'temperature.gpu'], dropped: [] },
        intervalMs: 20,
        clock: createMonoClock(),
        env: smiEnv('hang-loop'),
        onSample: () => undefined,
        hangMs: 300,
        restartDelayMs: 10_000,
      });
      const poll = setInterval(() => {
        const gap = loop.gaps()[0];
        if (gap) {
          clearInterval(poll);
          void loop.stop().then(() => resolve(gap.reason));
        }
      }, 20);
    });
    expect(gaps).toMatch(
      /gave no sample for 0 s \(it hangs\): restarted|gave no sample for .* \(it hangs\): restarted/,
    );
  });

  it('servebench run stuck on a hanging nvidia-smi stops at SIGTERM at once: one call, folder kept, cancelled', async () => {
    const server = await llm();
    const log = join(out, 'calls.jsonl');
    const child = spawn(
      process.execPath,
      [
        CLI,
        'run',
        '--url',
        server.url,
        '--concurrency',
        '1',
        '--output-len',
        '8',
        '--nvidia-smi',
        HOSTILE_SMI,
        '--out',
        out,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: smiEnv('hang', { FAKE_NVSMI_LOG: log }) },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    // Wait until the probe hangs in nvidia-smi, then ask the run to stop.
    while (!existsSync(log)) await new Promise((resolve) => setTimeout(resolve, 20));
    child.kill('SIGTERM');
    const status = await exited;
    expect(status, stderr).toBe(130);
    const calls = (await readFile(log, 'utf8')).split('\n').filter(Boolean);
    expect(calls).toHaveLength(1);
    expect(isAlive((JSON.parse(calls[0]!) as { pid: number }).pid)).toBe(false);
    const [name] = await readdir(out).then((names) => names.filter((n) => n !== 'calls.jsonl'));
    const record = JSON.parse(await readFile(join(out, name!, 'run.json'), 'utf8')) as RunRecord;
    expect(record.status).toBe('cancelled');
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
