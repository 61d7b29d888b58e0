import type { Comparison } from './compare.js';
import { metricOf } from './definitions.js';
import type { Metric } from './definitions.js';
import { FIGURES } from './types.js';
import type { CompareSeries, FigureSource } from './types.js';

const MATCH_TEXT: Record<FigureSource['match'], string> = {
  same: "same definition as servebench's",
  converted: "converted exactly to servebench's definition",
  differs: "another figure: shown under its own name, never compared with servebench's",
};

/** One series' definitions, one line per metric: "TPOT (p50, p95): another figure …: AIPerf inter_token_latency: …". */
function seriesDefinitionLines(s: CompareSeries): string[] {
  const defs = s.definitions;
  if (!defs) return [];
  const byMetric = new Map<Metric, Array<(typeof FIGURES)[number]>>();
  for (const f of FIGURES) byMetric.set(metricOf(f.key), [...(byMetric.get(metricOf(f.key)) ?? []), f]);
  const lines: string[] = [];
  for (const figures of byMetric.values()) {
    const first = figures[0];
    const d = first ? defs[first.key] : undefined;
    if (!first || !d) continue;
    const name = first.label.replace(/ p50$/, '');
    const which = figures.length > 1 ? ` (${figures.map((f) => f.label.slice(name.length + 1)).join(', ')})` : '';
    const own = d.name.replace(/ p50$/, '');
    lines.push(`${name}${which}: ${MATCH_TEXT[d.match]}; ${own}: ${d.note}`);
  }
  return lines;
}

/** Per series another tool wrote, how compare read each of its figures (servebench's own series have none). */
export function definitionNotes(c: Comparison): Array<{ label: string; lines: string[] }> {
  return c.series.map((s) => ({ label: s.label, lines: seriesDefinitionLines(s) })).filter((x) => x.lines.length > 0);
}
