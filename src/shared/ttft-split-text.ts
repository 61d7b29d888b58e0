import { loadText } from './level-load.js';
import type { RunRecord, TtftPart, TtftSplit } from './run-record.js';

const PART_NAMES: Record<Exclude<TtftPart['part'], 'rest'>, string> = {
  queue: 'queue',
  prefill: 'prefill',
  'server-other': 'server other',
  connect: 'connect',
};

const SOURCE_NAMES: Record<TtftPart['source'], string> = {
  'engine-metrics': 'engine /metrics',
  'engine-ttft-less-queue': 'engine TTFT less queue',
  'server-timings': 'server timings',
  client: 'client stamps',
  rest: 'TTFT less the known parts',
  unknown: 'unknown',
};

function ms(v: number): string {
  return v >= 100 ? v.toFixed(0) : v.toFixed(1);
}

/** What the rest holds: the network, HTTP stack and client, and every part the server did not give. */
export function restName(split: TtftSplit): string {
  const unknown = split.unknown.map((p) => (p === 'rest' ? '' : PART_NAMES[p])).filter((p) => p !== '');
  return [...unknown, 'network and client'].join(', ');
}

/** A part's name in a legend: the rest says what it holds in this split. */
export function partName(split: TtftSplit, part: TtftPart['part']): string {
  return part === 'rest' ? restName(split) : PART_NAMES[part];
}

/** One known part as shown: "queue 600 (engine /metrics)". */
export function partText(split: TtftSplit, part: TtftPart): string {
  const name = part.part === 'rest' ? restName(split) : PART_NAMES[part.part];
  return `${name} ${part.ms === null ? '?' : ms(part.ms)} (${SOURCE_NAMES[part.source]})`;
}

/**
 * A level's TTFT split in one line: "of TTFT p50 812 ms: queue 600 (engine /metrics), prefill 150 (...), network and
 * client 62 (TTFT less the known parts); unknown: queue", and the engine's decode time per token where known.
 */
export function ttftSplitText(split: TtftSplit): string {
  const parts = split.parts.filter((p) => p.ms !== null).map((p) => partText(split, p));
  const unknown =
    split.unknown.length > 0 ? `; unknown: ${split.unknown.map((p) => PART_NAMES[p as 'queue']).join(', ')}` : '';
  const decode = split.decode
    ? `; decode ${ms(split.decode.msPerToken)} ms/token (${SOURCE_NAMES[split.decode.source]})`
    : '';
  return `of TTFT ${split.basis} ${ms(split.ttftMs)} ms: ${parts.join(', ')}${unknown}${decode}`;
}

/** The lines a report shows under "Where TTFT goes": each level's load and its split. */
export function ttftSplitRows(record: RunRecord): Array<{ level: string; text: string }> {
  return record.levels.flatMap((l) =>
    l.ttftSplit ? [{ level: loadText(l, true), text: ttftSplitText(l.ttftSplit) }] : [],
  );
}

/** The note under the reports' split: what the parts are and how exact. */
export const TTFT_SPLIT_NOTE =
  "Queue and prefill from the engine's own figures (vLLM's and SGLang's /metrics histograms: means over the requests they counted in the level; llama.cpp's timings: the requests from TTFT p40 to p60); network and client is TTFT less the known parts.";
