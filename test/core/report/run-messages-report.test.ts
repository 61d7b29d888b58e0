import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBenchmark } from '../../../src/core/benchmark.js';
import { htmlReport } from '../../../src/core/report/html.js';
import { loadRunFolder } from '../../../src/core/report/load-run-folder.js';
import { markdownReport } from '../../../src/core/report/markdown.js';
import { createTelemetryRecorder } from '../../../src/core/telemetry/recorder.js';
import { BenchConfigSchema } from '../../../src/shared/config.js';
import type { RunEvent } from '../../../src/shared/events.js';
import { messageRows } from '../../../src/shared/message-rows.js';
import type { RunRecord } from '../../../src/shared/run-record.js';
import { attachTo, attachedServer } from '../../fakes/attached-server.js';
import { closeAll, startSim, testProfile } from '../sim/helpers.js';
import { fixtureDir } from './fixtures.js';

afterAll(closeAll);

let out: string;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'sb-runmsgs-report-'));
});
afterEach(async () => {
  await rm(out, { recursive: true, force: true });
});

describe('messages said during a run against the simulator', () => {
  it('reach run.json, the Markdown and the HTML report', async () => {
    const sim = await startSim({ profile: testProfile({ 'max-model-len': 4096 }), model: 'sim-model' });
    const missing = join(out, 'no-such-nvidia-smi');
    const events: RunEvent[] = [];
    const result = await runBenchmark(
      BenchConfigSchema.parse({
        out,
        label: 'msgs',
        rounds: 1,
        requestsPerRound: 4,
        warmup: 2,
        concurrency: [2],
        inputLen: [32],
        outputLen: [4],
        server: { engine: 'attach', url: sim.url },
      }),
      {
        startServer: attachTo(sim.url, { metricsUrl: `${sim.url}/metrics` }),
        // No nvidia-smi where the run looks: the run warns that GPU telemetry is unavailable.
        createTelemetry: (o) =>
          createTelemetryRecorder({
            clock: o.clock,
            metricsUrl: o.metricsUrl,
            engine: o.engine,
            nvidiaSmiPath: missing,
          }),
        onEvent: (e) => events.push(e),
      },
    );
    expect(result.failure).toBeUndefined();
    const said = events.flatMap((e) => (e.type === 'message' ? [e] : []));
    const gpu = said.find((m) => m.text.startsWith('GPU telemetry unavailable'));
    expect(gpu?.severity).toBe('warn');
    expect(gpu?.text).toContain('no-such-nvidia-smi');

    const onDisk = JSON.parse(await readFile(join(result.dir, 'run.json'), 'utf8')) as RunRecord;
    // Every message the host saw is in run.json, once each (none repeats here), in order.
    expect(onDisk.messages?.map((m) => [m.severity, m.text])).toEqual(said.map((m) => [m.severity, m.text]));
    const kept = onDisk.messages?.find((m) => m.text === gpu?.text);
    expect(kept?.levelIndex).toBeUndefined();
    expect(kept?.atMs).toBeGreaterThanOrEqual(0);
    expect(kept?.atMs).toBeLessThanOrEqual(onDisk.levels[0]!.rounds[0]!.startMs);

    const folder = await loadRunFolder(result.dir);
    const md = markdownReport(folder);
    expect(md).toContain('## Messages during the run');
    expect(md).toMatch(/- \*\*WARN\*\* \d+:\d\d: GPU telemetry unavailable: nvidia-smi not found at /);
    const html = htmlReport(folder);
    expect(html).toContain('<section id="messages"><h2>Messages during the run</h2>');
    expect(html).toMatch(
      /<span class="status warn">WARN<\/span> <span class="msg-time">\d+:\d\d<\/span>: GPU telemetry unavailable/,
    );
  });
});

describe('messages of a server sweep', () => {
  it('name the server configuration that said them, each configuration its own', async () => {
    const missing = join(out, 'no-such-nvidia-smi');
    const result = await runBenchmark(
      BenchConfigSchema.parse({
        out,
        label: 'sweep',
        rounds: 1,
        requestsPerRound: 3,
        warmup: 1,
        concurrency: [1],
        inputLen: [32],
        outputLen: [4],
        server: { engine: 'attach', url: 'http://127.0.0.1:9' },
        serverVariants: [{ maxSeqs: 8 }, { maxSeqs: 16 }],
      }),
      {
        // One fresh simulator per server configuration (the server restarts between configurations).
        startServer: async () => {
          const sim = await startSim({ profile: testProfile({ 'max-model-len': 4096 }), model: 'sim-model' });
          return attachedServer({ engine: 'attach', baseUrl: sim.url, model: 'sim-model', simulated: true }, () =>
            sim.close(),
          );
        },
        createTelemetry: (o) => createTelemetryRecorder({ clock: o.clock, engine: o.engine, nvidiaSmiPath: missing }),
      },
    );
    expect(result.failure).toBeUndefined();
    const gpu = result.record.messages?.filter((m) => m.text.startsWith('GPU telemetry unavailable')) ?? [];
    expect(gpu.map((m) => [m.serverConfigIndex, m.count, m.levelIndex])).toEqual([
      [0, undefined, undefined],
      [1, undefined, undefined],
    ]);
    const md = markdownReport(await loadRunFolder(result.dir));
    expect(md).toMatch(/\(server maxSeqs=16\): GPU telemetry unavailable/);
  });
});

describe('reports of a run that kept no messages', () => {
  it('have no messages section (an older run.json without the field still loads)', async () => {
    const folder = await loadRunFolder(fixtureDir('closed'));
    expect(folder.record.messages).toBeUndefined();
    expect(markdownReport(folder)).not.toContain('Messages during the run');
    expect(htmlReport(folder)).not.toContain('id="messages"');
  });
});

describe('message rows', () => {
  it('time a message from the run start, name its level or server, and count repeats', async () => {
    const record = structuredClone((await loadRunFolder(fixtureDir('closed'))).record);
    const startOffset = Date.parse(record.startedAt) - Date.parse(record.clock.originWall);
    record.messages = [
      { atMs: startOffset + 65_400, severity: 'warn', text: 'a | b', count: 3, levelIndex: 0 },
      { atMs: startOffset + 3_725_000, severity: 'error', text: 'late', serverConfigIndex: 1 },
    ];
    record.messagesLeftOut = 2;
    expect(messageRows(record)).toEqual([
      { severity: 'warn', time: '1:05', where: 'c=1 32/16', text: 'a | b', count: 3 },
      { severity: 'error', time: '1:02:05', where: 'server configuration 2', text: 'late' },
    ]);
    const md = markdownReport({ ...(await loadRunFolder(fixtureDir('closed'))), record });
    expect(md).toContain('- **WARN** 1:05 (c=1 32/16): a \\| b (×3)');
    expect(md).toContain('_2 more messages not kept (the run keeps the first 500 distinct ones)._');
    const html = htmlReport({ ...(await loadRunFolder(fixtureDir('closed'))), record });
    expect(html).toContain('<span class="status fail">ERROR</span>');
    expect(html).toContain('<span class="sub">×3</span>');
  });
});
