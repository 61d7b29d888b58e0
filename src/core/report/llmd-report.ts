import { createHash } from 'node:crypto';
import { stringify } from 'yaml';
import { requestE2eMs } from '../../shared/request-record.js';
import type { RequestRecord } from '../../shared/request-record.js';
import type { LevelResult, RunRecord, Summary } from '../../shared/run-record.js';
import { loadText } from '../../shared/level-load.js';
import { isCancelled, isMeasured } from '../metrics/request-metrics.js';
import { summarize } from '../metrics/percentiles.js';
import type { ExportFile, Exporter } from './exporter.js';
import { requestsByLevel } from './load-run-folder.js';
import type { RunFolder } from './load-run-folder.js';

// llm-d-benchmark's Benchmark Report v0.2: llmdbenchmark/analysis/benchmark_report/schema_v0_2.py,
// schema_v0_2_components.py and br_v0_2_json_schema.json at llm-d/llm-d-benchmark 8bc9f1ddd873. One report is one
// point of a sweep, so a run gives one report per level; llm-d's tools read one report per file
// (benchmark_report_v0.2,_*.yaml). Beyond the JSON schema this honours the pydantic model's checks: units of the
// right kind per field (ms, ms/token, tokens/s, queries/s, count), concurrency an integer, rate_qps above 0.

type Obj = Record<string, unknown>;

/** llm-d's cfg_id: a 32-hex hash of a configuration. */
function cfgId(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 32);
}

/** A Statistics object from a servebench summary; undefined when it has no values (the schema requires a mean). */
function statistics(s: Summary | undefined, units: string): Obj | undefined {
  if (!s || s.n === 0 || s.mean === null) return undefined;
  const out: Obj = { units, mean: s.mean };
  const keys: Array<[keyof Summary, string]> = [
    ['std', 'stddev'],
    ['min', 'min'],
    ['p50', 'p50'],
    ['p90', 'p90'],
    ['p95', 'p95'],
    ['p99', 'p99'],
    ['max', 'max'],
  ];
  for (const [from, to] of keys) if (typeof s[from] === 'number') out[to] = s[from];
  return out;
}

/** Drops undefined members, so an absent figure is absent rather than null. */
function compact(o: Obj): Obj {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

/** Rate over the level's complete rounds: what they made / their summed windows (compare's throughput). */
function pooledRate(level: LevelResult, rate: (r: LevelResult['rounds'][number]) => number): number | undefined {
  const complete = level.rounds.filter((r) => !r.partial);
  const rounds = complete.length > 0 ? complete : level.rounds;
  const windowMs = rounds.reduce((a, r) => a + r.windowMs, 0);
  if (windowMs <= 0 || level.outputTokPerSec === null) return undefined;
  return rounds.reduce((a, r) => a + rate(r) * r.windowMs, 0) / windowMs;
}

function engineComponent(record: RunRecord, level: LevelResult): Obj {
  const e = record.environment.engine;
  const gpus = record.environment.gpus ?? [];
  const tool = e.simulated ? 'servebench-sim' : e.kind;
  const server = { ...record.config.server, ...(level.serverVariant ? { variant: level.serverVariant } : {}) };
  const name = gpus[0]?.name;
  const model = e.model ?? record.config.model ?? record.config.server.model;
  const standardized: Obj =
    name && model
      ? {
          kind: 'inference_engine',
          tool,
          tool_version: e.version ?? 'unknown',
          role: 'replica',
          replicas: 1,
          model: { name: model },
          accelerator: {
            model: name,
            count: gpus.length,
            parallelism: { tp: record.config.server.tensorParallel ?? 1, dp: 1, dp_local: 1, workers: 1, ep: 1, pp: 1 },
          },
        }
      : // No GPU reported (an attached remote server, no nvidia-smi): the schema's generic component.
        compact({
          kind: 'generic',
          tool,
          tool_version: e.version ?? 'unknown',
          model: model ? { name: model } : undefined,
        });
  return {
    metadata: { schema_version: '0.0.1', label: `${tool}-0`, cfg_id: cfgId(server) },
    standardized,
    native: { config: server },
  };
}

function loadSection(record: RunRecord, level: LevelResult, index: number): Obj {
  const { server: _server, ...config } = record.config;
  const source = config.prompts || config.trace ? 'sampled' : 'random';
  const rate = level.rate;
  const cap = rate !== undefined ? record.config.maxConcurrency : level.concurrency;
  return {
    metadata: compact({
      schema_version: '0.0.1',
      cfg_id: cfgId(config),
      description: record.simulated ? "SIMULATED: measured on servebench's built-in simulator, not a GPU" : undefined,
    }),
    standardized: compact({
      tool: 'servebench',
      tool_version: record.environment.servebenchVersion,
      source,
      stage: index,
      input_seq_len: { distribution: 'fixed', value: level.inputLen },
      // Only an enforced output length is one (ignore_eos: every request asked to run to its length).
      output_seq_len: config.ignoreEos ? { distribution: 'fixed', value: level.outputLen } : undefined,
      multi_turn:
        config.turns > 1 ? { enabled: true, max_turns: { distribution: 'fixed', value: config.turns } } : undefined,
      rate_qps: rate !== undefined && rate > 0 ? rate : undefined,
      concurrency: cap !== undefined && cap >= 1 ? Math.round(cap) : undefined,
    }),
    native: { config },
  };
}

function requestsSection(level: LevelResult, requests: readonly RequestRecord[]): Obj {
  const ok = requests.filter((r) => r.ok);
  const counts = (f: (r: RequestRecord) => number): Summary | undefined =>
    ok.length ? summarize(ok.map(f)) : undefined;
  return compact({
    total: level.completed + level.failed + (level.cancelled ?? 0),
    failures: level.failed,
    incomplete: level.cancelled ? level.cancelled : undefined,
    input_length: statistics(
      counts((r) => r.nIn ?? r.expectedIn),
      'count',
    ),
    output_length: statistics(
      counts((r) => r.nOut),
      'count',
    ),
  });
}

function latencySection(level: LevelResult, requests: readonly RequestRecord[]): Obj {
  // NTPOT, E2E / output tokens per request: the schema's "time per output token including the first".
  const ntpot = requests.flatMap((r) => {
    const e2e = requestE2eMs(r);
    return r.ok && e2e !== null && r.nOut > 0 ? [e2e / r.nOut] : [];
  });
  return compact({
    time_to_first_token: statistics(level.ttftMs, 'ms'),
    normalized_time_per_output_token: statistics(ntpot.length ? summarize(ntpot) : undefined, 'ms/token'),
    time_per_output_token: statistics(level.tpotMs, 'ms/token'),
    inter_token_latency: statistics(level.itlMs, 'ms/token'),
    request_latency: statistics(level.e2eMs, 'ms'),
  });
}

function throughputSection(level: LevelResult): Obj {
  const rate = (units: string, v: number | undefined): Obj | undefined =>
    v === undefined ? undefined : { units, mean: v };
  return compact({
    output_token_rate: rate(
      'tokens/s',
      pooledRate(level, (r) => r.outputTokPerSec),
    ),
    total_token_rate: rate(
      'tokens/s',
      pooledRate(level, (r) => r.totalTokPerSec),
    ),
    request_rate: rate(
      'queries/s',
      pooledRate(level, (r) => r.reqPerSec),
    ),
  });
}

/** One level as a Benchmark Report v0.2 (plain data, ready for YAML or JSON). */
function llmdLevelReport(
  record: RunRecord,
  level: LevelResult,
  index: number,
  requests: readonly RequestRecord[],
): Obj {
  const origin = Date.parse(record.clock.originWall);
  const iso = (ms: number): string | undefined =>
    Number.isFinite(origin) ? new Date(origin + ms).toISOString() : undefined;
  const seconds = Math.max(0, (level.endMs - level.startMs) / 1000);
  const power = level.telemetry?.powerMeanW;
  const engine = engineComponent(record, level);
  const label = (engine.metadata as Obj).label as string;
  return compact({
    version: '0.2',
    run: {
      uid: `${record.id}-${index}`,
      // One experiment per server configuration: llm-d groups a run's stages by eid, not a sweep's treatments.
      eid:
        new Set(record.levels.map((l) => l.serverConfigIndex)).size > 1
          ? `${record.id}-config${level.serverConfigIndex}`
          : record.id,
      time: compact({ start: iso(level.startMs), end: iso(level.endMs), duration: `PT${Number(seconds.toFixed(3))}S` }),
      description: `${record.simulated ? 'SIMULATED: ' : ''}${record.label} [${loadText(level)}]`,
    },
    scenario: { stack: [engine], load: loadSection(record, level, index) },
    results: compact({
      request_performance: {
        aggregate: compact({
          requests: requestsSection(level, requests),
          latency: latencySection(level, requests),
          throughput: throughputSection(level),
        }),
      },
      observability:
        typeof power === 'number'
          ? {
              components: [
                { component_label: label, aggregate: { power_consumption: { units: 'Watts', mean: power } } },
              ],
            }
          : undefined,
    }),
  });
}

/** Every level's report, in level order, with the level's measured requests (warm-up and cancelled left out). */
export function llmdReports(folder: RunFolder): Obj[] {
  const byLevel = requestsByLevel(folder);
  return folder.record.levels.map((level, i) =>
    llmdLevelReport(
      folder.record,
      level,
      i,
      (byLevel[i] ?? []).filter((r) => isMeasured(r) && !isCancelled(r)),
    ),
  );
}

// YAML 1.1 rules: llm-d reads with PyYAML, which takes an unquoted yes, on or timestamp for a boolean or a date.
const yaml = (report: Obj): string => stringify(report, { version: '1.1', lineWidth: 0 });

/** The file of each level, named as llm-d's tools look for them (benchmark_report_v0.2,_*.yaml). */
export function llmdReportFiles(folder: RunFolder): ExportFile[] {
  return llmdReports(folder).map((report, i) => ({
    // The run id comes from run.json, which anyone may have written: only name characters, never a path.
    name: `benchmark_report_v0.2,_servebench_${folder.record.id.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_')}_level${i}.yaml`,
    text: yaml(report),
  }));
}

export const llmdReportExporter: Exporter = {
  format: 'llmd-benchmark-report',
  extension: '.llmd.yaml',
  mediaType: 'application/yaml',
  binary: false,
  description: "per level, an llm-d Benchmark Report v0.2 (one YAML file a level; '--out -' writes them as one stream)",
  render: async (folder) =>
    llmdReports(folder)
      .map((r) => `---\n${yaml(r)}`)
      .join(''),
  renderFiles: async (folder) => llmdReportFiles(folder),
};
