import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { benchConfigFromFlags } from '../../src/cli/run-options.js';
import { recordedConfig } from '../../src/cli/run-from.js';
import { BenchConfigSchema } from '../../src/shared/config.js';
import { decodeRunJson } from '../../src/shared/run-record-schema.js';
import type { RunRecord } from '../../src/shared/run-record.js';
import { runCliAsync } from '../fakes/run-cli.js';
import { FIXTURE_SECRETS, fixtureCopy, fixtureDir } from '../core/report/fixtures.js';

const tiny = ['--requests-per-round', '4', '--warmup', '1'];

async function readRecord(dir: string): Promise<RunRecord> {
  const decoded = decodeRunJson(await readFile(join(dir, 'run.json'), 'utf8'));
  if ('problem' in decoded) throw new Error(decoded.problem);
  return decoded.record;
}

/** A copy of a fixture whose run.json was changed by `edit`. */
async function tampered(edit: (record: Record<string, unknown>) => Record<string, unknown>): Promise<string> {
  const dir = await fixtureCopy('attach');
  const record = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8')) as Record<string, unknown>;
  await writeFile(join(dir, 'run.json'), JSON.stringify(edit(record)));
  return dir;
}

describe('recordedConfig + benchConfigFromFlags (run --from)', () => {
  it('gives back the recorded configuration, with the run folder beside the old one', async () => {
    const from = await recordedConfig(fixtureDir('sweep'), {}, {});
    const config = benchConfigFromFlags({}, {}, from.base);
    const old = await readRecord(fixtureDir('sweep'));
    // Every recorded value comes back; settings added since the record was written take today's defaults.
    expect({ ...config, out: old.config.out }).toEqual(BenchConfigSchema.parse(old.config));
    expect(config.out).toBe(dirname(fixtureDir('sweep')));
    expect(from.fromRun).toEqual({ id: old.id, path: fixtureDir('sweep') });
    expect(from.notices).toEqual([]);
  });

  it('lets every flag win over the record: lengths, label, sweep, seed, output folder', async () => {
    const from = await recordedConfig(fixtureDir('sweep'), {}, {});
    const config = benchConfigFromFlags(
      { concurrency: '2', label: 'again', vary: ['threshold=0.8'], seed: '7', out: '/tmp/elsewhere' },
      {},
      from.base,
    );
    expect(config.concurrency).toEqual([2]);
    expect(config.label).toBe('again');
    expect(config.serverVariants).toEqual([{ diffusion: { threshold: 0.8 } }]);
    expect(config.seed).toBe(7);
    expect(config.server.seed).toBe(7);
    expect(config.out).toBe('/tmp/elsewhere');
    expect(config.gpuPricePerHour).toBe(3.5);
    const attached = benchConfigFromFlags({ url: 'http://127.0.0.1:8000', model: 'm' }, {}, from.base);
    expect(attached.server.engine).toBe('attach');
    expect(attached.server.url).toBe('http://127.0.0.1:8000');
    expect(attached.model).toBe('m');
  });

  it('records a workload file by its full path, so that --from reads it again from any folder', () => {
    const config = benchConfigFromFlags({ prompts: 'data/prompts.jsonl' }, {});
    expect(config.prompts).toBe(join(process.cwd(), 'data', 'prompts.jsonl'));
    expect(benchConfigFromFlags({ trace: '/srv/trace.jsonl' }, {}).trace).toBe('/srv/trace.jsonl');
  });

  it('never sends a redacted secret: the API key and the HF token are dropped and named in one line', async () => {
    const from = await recordedConfig(fixtureDir('closed'), {}, {});
    const config = benchConfigFromFlags({}, {}, from.base);
    expect(config.apiKey).toBeUndefined();
    expect(config.server.env).toEqual({});
    expect(JSON.stringify(config)).not.toMatch(/\*\*\*|<redacted>/);
    expect(from.notices).toHaveLength(1);
    expect(from.notices[0]).toMatch(/--api-key KEY \(or SERVEBENCH_API_KEY\), --env HF_TOKEN=\.\.\./);
  });

  it('asks for no secret the command line or the environment gives again, and uses those', async () => {
    const values = { 'api-key': 'sk-new', env: ['HF_TOKEN=hf_new'] };
    const from = await recordedConfig(fixtureDir('closed'), values, {});
    expect(from.notices).toEqual([]);
    const config = benchConfigFromFlags(values, {}, from.base);
    expect(config.apiKey).toBe('sk-new');
    expect(config.server.env).toEqual({ HF_TOKEN: 'hf_new' });
    const byEnv = await recordedConfig(fixtureDir('closed'), {}, { SERVEBENCH_API_KEY: 'sk-env' });
    expect(byEnv.notices.join('\n')).not.toMatch(/--api-key/);
    expect(benchConfigFromFlags({}, { SERVEBENCH_API_KEY: 'sk-env' }, byEnv.base).apiKey).toBe('sk-env');
  });

  it('drops redacted server arguments and URL passwords, and an attach URL when another engine is asked for', async () => {
    const dir = await tampered((r) => {
      const config = r.config as Record<string, Record<string, unknown>>;
      config.server = {
        ...config.server,
        url: 'http://bench:***@127.0.0.1:18777/',
        extraArgs: ['--api-key', '***', '--db-password=***', '--trust-remote-code'],
      };
      return r;
    });
    try {
      const from = await recordedConfig(dir, {}, {});
      const server = from.base.server as Record<string, unknown>;
      expect(server.extraArgs).toEqual(['--trust-remote-code']);
      // servebench sends no URL credentials (--url with them is refused): the recorded ones are dropped, and said so.
      expect(server.url).toBe('http://127.0.0.1:18777/');
      expect(from.notices.join('\n')).toMatch(/--server-arg=--api-key=\.\.\., --server-arg=--db-password=\.\.\.$/m);
      expect(from.notices.join('\n')).toMatch(/the recorded --url carried a user name or password/);
      const sim = await recordedConfig(dir, { engine: 'sim' }, {});
      const config = benchConfigFromFlags({ engine: 'sim' }, {}, sim.base);
      expect(config.server.engine).toBe('sim');
      expect(config.server.url).toBeUndefined();
    } finally {
      await rm(dirname(dir), { recursive: true, force: true });
    }
  });

  it('asks for --cmd again when the recorded server command had a secret, rather than run it with ***', async () => {
    const dir = await tampered((r) => {
      const config = r.config as Record<string, Record<string, unknown>>;
      config.server = { ...config.server, engine: 'command', url: undefined, command: ['srv', '--api-key', '***'] };
      return r;
    });
    try {
      const from = await recordedConfig(dir, {}, {});
      expect((from.base.server as Record<string, unknown>).command).toBeUndefined();
      expect(from.notices.join('\n')).toMatch(/--cmd "\.\.\." \(its secret arguments were redacted\)/);
      expect(() => benchConfigFromFlags({}, {}, from.base)).toThrow(/--engine command needs --cmd/);
      const again = { cmd: 'srv --api-key real-key-123 --port {port}' };
      const ok = benchConfigFromFlags(again, {}, (await recordedConfig(dir, again, {})).base);
      expect(ok.server.command).toEqual(['srv', '--api-key', 'real-key-123', '--port', '{port}']);
    } finally {
      await rm(dirname(dir), { recursive: true, force: true });
    }
  });

  it('lays --preset over the recorded server and the flags over both (recorded < preset < flags)', async () => {
    // closed ran the sim with profile thermal-throttle-demo; sim-demo names h200-llama8b-bf16.
    const values = { preset: 'sim-demo' };
    const from = await recordedConfig(fixtureDir('closed'), values, {});
    expect(benchConfigFromFlags(values, {}, from.base).server.simProfile).toBe('h200-llama8b-bf16');
    const flagged = { preset: 'sim-demo', 'sim-profile': 'h200-dllm-block' };
    const flags = benchConfigFromFlags(flagged, {}, (await recordedConfig(fixtureDir('closed'), flagged, {})).base);
    expect(flags.server.simProfile).toBe('h200-dllm-block');
    // A key the preset does not set keeps its recorded value.
    expect(benchConfigFromFlags(values, {}, from.base).server.startTimeoutMs).toBe(1_200_000);
  });

  it('a preset of another engine drops the recorded address and arguments, and says so in one line', async () => {
    const dir = await tampered((r) => {
      const config = r.config as Record<string, Record<string, unknown>>;
      config.server = { ...config.server, extraArgs: ['--old-engine-flag'], maxSeqs: 12 };
      return r;
    });
    try {
      const values = { preset: 'llama-3.1-8b-vllm-bf16' };
      const from = await recordedConfig(dir, values, {});
      const config = benchConfigFromFlags(values, {}, from.base);
      expect(config.server).toMatchObject({
        engine: 'vllm',
        model: 'meta-llama/Llama-3.1-8B-Instruct',
        dtype: 'bfloat16',
        maxModelLen: 8192,
        maxSeqs: 12,
        extraArgs: [],
      });
      expect(config.server.url).toBeUndefined();
      expect(config.model).toBe('meta-llama/Llama-3.1-8B-Instruct');
      expect(from.notices).toEqual([
        '--from: --preset llama-3.1-8b-vllm-bf16 runs vllm, not the recorded attach: recorded server url, extraArgs not applied',
      ]);
      await expect(recordedConfig(dir, { preset: 'nope' }, {})).rejects.toThrow(/unknown --preset 'nope'; available:/);
    } finally {
      await rm(dirname(dir), { recursive: true, force: true });
    }
  });

  it('names config fields this servebench does not know instead of dropping them silently', async () => {
    const dir = await tampered((r) => ({ ...r, config: { ...(r.config as object), futureKnob: 3 } }));
    try {
      const from = await recordedConfig(dir, {}, {});
      expect(from.notices).toEqual(['--from: run.json sets futureKnob, unknown to this servebench: not applied']);
    } finally {
      await rm(dirname(dir), { recursive: true, force: true });
    }
  });
});

// Each command may take up to a couple of minutes on a loaded machine: the limit is well above their sum.
describe('servebench run --from', { timeout: 600_000 }, () => {
  let out: string;
  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), 'sb-from-'));
  });
  afterAll(async () => {
    await rm(out, { recursive: true, force: true });
  });

  it('re-runs a recorded run on the simulator, flags winning, and records where it came from', async () => {
    const r = await runCliAsync(['run', '--from', fixtureDir('closed'), '--out', out, '--concurrency', '2', ...tiny]);
    expect(r.stderr).toMatch(/--from: secrets are not recorded; .*--env HF_TOKEN=\.\.\./);
    expect([0, 1]).toContain(r.status);
    const [folder] = await readdir(out);
    const record = await readRecord(join(out, folder as string));
    const old = await readRecord(fixtureDir('closed'));
    expect(record.fromRun).toEqual({ id: old.id, path: fixtureDir('closed') });
    expect(record.config.concurrency).toEqual([2]);
    expect(record.config.requestsPerRound).toBe(4);
    expect(record.config.server.simProfile).toBe(old.config.server.simProfile);
    expect(record.config.gpuPricePerHour).toBe(old.config.gpuPricePerHour);
    expect(record.config.apiKey).toBeUndefined();
    expect(record.levels.map((l) => l.concurrency)).toEqual([2]);
    const text = await readFile(join(out, folder as string, 'run.json'), 'utf8');
    for (const secret of FIXTURE_SECRETS) expect(text).not.toContain(secret);
  });

  it('runs --from with --preset: the preset over the record, recorded settings it leaves alone kept', async () => {
    const dir = join(out, 'preset');
    const r = await runCliAsync(['run', '--from', fixtureDir('closed'), '--preset', 'sim-demo', '--out', dir, ...tiny]);
    expect([0, 1]).toContain(r.status);
    const [folder] = await readdir(dir);
    const record = await readRecord(join(dir, folder as string));
    const old = await readRecord(fixtureDir('closed'));
    expect(record.config.server.simProfile).toBe('h200-llama8b-bf16');
    expect(record.config.concurrency).toEqual(old.config.concurrency);
    expect(record.fromRun?.id).toBe(old.id);
  });

  it('refuses a folder from a newer servebench, a damaged run.json and a missing folder in one line, exit 2', async () => {
    const newer = await tampered((r) => ({ ...r, schemaVersion: 2 }));
    const damaged = await fixtureCopy('attach');
    await writeFile(join(damaged, 'run.json'), '{"schemaVersion": 1, "id": ');
    try {
      const cases: Array<[string, RegExp]> = [
        [newer, /schemaVersion 2, written by a newer servebench .*: update servebench/],
        [damaged, /is damaged \(not valid JSON/],
        [join(out, 'no-such-run'), /no run\.json in .*no-such-run: give a run folder/],
      ];
      for (const [dir, message] of cases) {
        const r = await runCliAsync(['run', '--from', dir, '--out', out, ...tiny]);
        expect(r.status, dir).toBe(2);
        expect(r.stderr.trim().split('\n'), dir).toHaveLength(1);
        expect(r.stderr).toMatch(message);
      }
    } finally {
      await rm(dirname(newer), { recursive: true, force: true });
      await rm(dirname(damaged), { recursive: true, force: true });
    }
  });
});
