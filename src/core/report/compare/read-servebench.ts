import { METRICS } from '../../../shared/metrics.js';
import type { RequestRecord } from '../../../shared/request-record.js';
import type { LevelResult } from '../../../shared/run-record.js';
import { isCancelled, isMeasured, requestMetrics } from '../../metrics/request-metrics.js';
import { loadKind, loadValue } from '../../../shared/level-load.js';
import { offeredText, variantLabel } from '../../../shared/report-columns.js';
import { diffusionText } from '../facts.js';
import { conditionSettings } from './condition-settings.js';
import { requestsByLevel } from '../load-run-folder.js';
import type { RunFolder } from '../load-run-folder.js';
import { figuresFromBlocks } from './statistics.js';
import type {
  CompareBlock,
  CompareLevel,
  CompareRequest,
  CompareSeries,
  Conditions,
  FigureKey,
  LevelFigures,
} from './types.js';

function toCompareRequest(r: RequestRecord): CompareRequest {
  if (!r.ok) return { ttftMs: null, tpotMs: null, e2eMs: null, outTokens: 0 };
  const m = requestMetrics(r);
  return { ttftMs: m.ttftMs, tpotMs: m.tpotMs, e2eMs: m.e2eMs, outTokens: r.nOut };
}

/** The level's rounds as bootstrap blocks: complete rounds only, as the level's throughput uses (all when none is). */
function blocksOf(level: LevelResult, requests: readonly RequestRecord[]): CompareBlock[] {
  const complete = level.rounds.filter((r) => !r.partial);
  const rounds = complete.length > 0 ? complete : level.rounds;
  return rounds
    .map((round) => ({
      windowMs: round.windowMs,
      requests: requests.filter((r) => r.round === round.round).map(toCompareRequest),
    }))
    .filter((b) => b.requests.length > 0);
}

/** Compare's throughput from the rounds alone: their output tokens over the sum of their windows (as blocksOf counts). */
function roundsThroughput(level: LevelResult): number | null {
  if (level.outputTokPerSec === null) return null;
  const complete = level.rounds.filter((r) => !r.partial);
  const rounds = complete.length > 0 ? complete : level.rounds;
  const windowMs = rounds.reduce((a, r) => a + r.windowMs, 0);
  return windowMs > 0 ? rounds.reduce((a, r) => a + r.outputTokPerSec * r.windowMs, 0) / windowMs : null;
}

/** The level's own summaries (run.json): what a record without requests.jsonl offers. */
function summaryFigures(level: LevelResult): LevelFigures {
  const figures: LevelFigures = {};
  for (const m of METRICS) if (m.views.compare) figures[m.views.compare] = m.level(level);
  return { ...figures, throughput: roundsThroughput(level) };
}

/** A level of a record alone: summaries, each marked as having no per-request data (and why). */
function summaryLevel(level: LevelResult, why: string): Pick<CompareLevel, 'figures' | 'missingRequests'> {
  const figures = summaryFigures(level);
  const missingRequests: Partial<Record<FigureKey, string>> = {};
  for (const k of Object.keys(figures) as FigureKey[]) missingRequests[k] = why;
  return { figures, missingRequests };
}

function conditionsOf(
  folder: RunFolder,
  level: LevelResult | undefined,
  many: boolean,
  measuredBy?: string,
): Conditions {
  const record = folder.record;
  const e = record.environment.engine;
  const gpus = record.environment.gpus ?? [];
  const names = [...new Set(gpus.map((g) => g.name).filter((n): n is string => !!n))];
  const variantQuant = level?.serverVariant?.quantization;
  return {
    measuredBy: measuredBy ?? `servebench ${record.environment.servebenchVersion}`,
    engine: `${e.kind}${e.version ? ` ${e.version}` : ''}`,
    model: e.model ?? record.config.model ?? record.config.server.model,
    quantization:
      (typeof variantQuant === 'string' ? variantQuant : undefined) ??
      record.config.server.quantization ??
      record.config.server.dtype ??
      'model default',
    // No GPU reported (attached to a remote server, no nvidia-smi) is unknown, not a difference.
    gpu: names.length
      ? `${gpus.length} × ${names.join(', ')}${gpus[0]?.driver ? ` (driver ${gpus[0].driver})` : ''}`
      : undefined,
    inputLen: level?.inputLen,
    outputLen: level?.outputLen,
    diffusion: diffusionOf(folder, level) ?? 'none',
    servebenchVersion: record.environment.servebenchVersion,
    simulated: record.simulated,
    ...conditionSettings(record.config, level?.serverConfigIndex ?? 0),
  };
}

/** Diffusion parameters of one server configuration: the base ones with the variant's overrides. */
function diffusionOf(folder: RunFolder, level: LevelResult | undefined): string | undefined {
  const base = folder.record.config.server.diffusion;
  const v = level?.serverVariant ?? {};
  const overrides = Object.entries(v).filter(([k]) => /diffusion|threshold|block/i.test(k));
  if (!base && overrides.length === 0) return diffusionText(folder.record);
  const params: Record<string, string> = base
    ? { algorithm: base.algorithm, block_size: String(base.blockSize), threshold: String(base.threshold) }
    : {};
  for (const [k, val] of overrides) {
    const name = (k.split('.').pop() ?? k).replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();
    params[name] = String(val);
  }
  return Object.entries(params)
    .map(([k, val]) => (k === 'algorithm' ? val : `${k} ${val}`))
    .join(', ');
}

/** How a record without its requests is read: why its figures have no interval, and who measured it. */
export interface RecordOnly {
  why: string;
  measuredBy: string;
}

/**
 * A run folder as compare series: one per server configuration (a server sweep gives several). With recordOnly
 * (a `servebench report --format json` file: run.json alone) each level gives its recorded summaries, no blocks.
 */
export function seriesFromRunFolder(folder: RunFolder, path: string, recordOnly?: RecordOnly): CompareSeries[] {
  const byLevel = requestsByLevel(folder);
  const configs = [...new Set(folder.record.levels.map((l) => l.serverConfigIndex))];
  const many = configs.length > 1;
  return configs.map((config) => {
    const levels: CompareLevel[] = [];
    folder.record.levels.forEach((level, i) => {
      if (level.serverConfigIndex !== config) return;
      // A burst's concurrency is only its in-flight cap: it is keyed by its size, as its own kind of load.
      const load: CompareLevel['load'] = { kind: loadKind(level), value: loadValue(level) };
      const common = {
        load,
        partial: level.partial,
        lengths: [level.inputLen, level.outputLen] as [number, number],
        ...(level.offered ? { offered: offeredText(level.offered, level.scheduleLagMs?.p99) } : {}),
      };
      if (recordOnly) {
        levels.push({ ...common, ...summaryLevel(level, recordOnly.why) });
        return;
      }
      const requests = (byLevel[i] ?? []).filter((r) => isMeasured(r) && !isCancelled(r));
      const blocks = blocksOf(level, requests);
      levels.push({ ...common, figures: figuresFromBlocks(blocks, level.outputTokPerSec !== null), blocks });
    });
    const first = folder.record.levels.find((l) => l.serverConfigIndex === config);
    return {
      label: many && first ? `${folder.record.label} [${variantLabel(first, true)}]` : folder.record.label,
      source: 'servebench' as const,
      path,
      conditions: conditionsOf(folder, first, many, recordOnly?.measuredBy),
      levels,
      notes: [...folder.notes],
    };
  });
}
