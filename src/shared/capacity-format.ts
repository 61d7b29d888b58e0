import { sloTargetText, type CapacityProbe, type CapacityResult, type SloJudgement } from './capacity.js';
import { fmtNumber, fmtValue } from './format.js';

const usd = (x: number): string => fmtValue(x, '$', 2);

/** A load as the user wrote it: c=24 in the closed loop, 24 req/s in the open loop. */
function loadText(mode: CapacityResult['mode'], load: number): string {
  return mode === 'rate' ? `${fmtNumber(load)} req/s` : `c=${load}`;
}

/** One SLO's figure with its interval: `TTFT p95 612 ms [580, 650]`. */
function judgementText(j: SloJudgement): string {
  const name = `${j.target.metric.toUpperCase()} p${j.target.percentile}`;
  // The value and its interval in one unit: ms, never switched to seconds (the interval's ends stay comparable).
  const value = j.valueMs === null ? 'n/a' : `${fmtNumber(j.valueMs)} ms`;
  const ci = j.ci ? ` [${fmtNumber(j.ci[0])}, ${fmtNumber(j.ci[1])}]` : '';
  return `${name} ${value}${ci}${j.note ? ` (${j.note})` : ''}`;
}

/** Why a probe did not meet: each SLO it failed or could not prove, with its interval. */
function missText(p: CapacityProbe): string {
  const misses = p.slos.filter((j) => j.verdict !== 'meets');
  // Uncertain for want of samples or of a whole level is no interval straddling anything.
  const straddles = misses.length > 0 && misses.every((j) => j.ci !== null);
  const word =
    p.verdict === 'fails' ? 'fails' : straddles ? 'uncertain, the interval straddles the limit' : 'uncertain';
  return `${word}: ${misses.map(judgementText).join('; ') || 'level cut short'}`;
}

/** Which search a result is, for a run with several: `input 128 / output 64 tokens · maxSeqs=8`; null when unnamed. */
export function capacityTitle(c: CapacityResult): string | null {
  const parts: string[] = [];
  if (c.inputLen !== undefined && c.outputLen !== undefined)
    parts.push(`input ${c.inputLen} / output ${c.outputLen} tokens`);
  if (c.serverVariant) {
    const settings = Object.entries(c.serverVariant).map(([k, v]) => `${k.split('.').pop()}=${String(v)}`);
    parts.push(`server ${(c.serverConfigIndex ?? 0) + 1}: ${settings.join(', ')}`);
  }
  return parts.length > 0 ? parts.join(' · ') : null;
}

/** The capacity search's answer for a terminal or a report: the answer line, the levels searched, the knee. */
export function capacityLines(c: CapacityResult): string[] {
  const slos = c.targets.map(sloTargetText).join(', ');
  const at = (load: number | null): CapacityProbe | undefined => c.probes.find((p) => p.load === load);
  const above = at(c.above);
  const money = [
    c.outputTokPerSec !== null ? `${Math.round(c.outputTokPerSec).toLocaleString('en-US')} out tok/s` : null,
    c.costPerMOutputTokUsd !== null ? `${usd(c.costPerMOutputTokUsd)} per 1M output tokens` : null,
  ].filter((x) => x !== null);
  const tail = money.length > 0 ? ` — ${money.join(', ')}` : '';
  let answer: string;
  if (c.capacity === null) {
    answer =
      c.outcome === 'stopped'
        ? `capacity: unknown — the search stopped before any level met ${slos}`
        : `capacity: none — ${above ? `${loadText(c.mode, above.load)} ${missText(above)}` : `no level met ${slos}`}`;
  } else {
    const cap = loadText(c.mode, c.capacity);
    const bracket = above ? ` (${loadText(c.mode, above.load)} ${missText(above)})` : '';
    const prefix =
      c.outcome === 'max-reached'
        ? `capacity: at least ${cap}, the search bound, meets ${slos} (raise --capacity-max to look further)`
        : c.outcome === 'stopped'
          ? `capacity: at least ${cap} meets ${slos} (the search stopped early)${bracket}`
          : `capacity: ${cap} meets ${slos}${bracket}`;
    answer = `${prefix}${tail}`;
  }
  const searched = c.probes
    .map((p) => {
      const good = p.goodputReqPerSec === null ? '' : ` ${fmtNumber(p.goodputReqPerSec)}`;
      return `${loadText(c.mode, p.load)} ${p.verdict}${good}`;
    })
    .join(' · ');
  const lines = [answer, `searched ${c.probes.length} levels (verdict, goodput req/s meeting every SLO): ${searched}`];
  if (c.saturation) {
    const s = c.saturation;
    lines.push(`saturation: knee at ${loadText(c.mode, s.load)} (to ${loadText(c.mode, s.nextLoad)}: ${s.detail})`);
  }
  return lines;
}

/** The levels the search measured as a table (header, then one row per level in load order), for reports and the app. */
export function capacityTable(c: CapacityResult): { header: string[]; rows: string[][] } {
  const header = [
    c.mode === 'rate' ? 'Rate (req/s)' : 'Concurrency',
    'Verdict',
    ...c.targets.map((t) => `${t.metric.toUpperCase()} p${t.percentile} (ms) [95 % CI] ≤ ${t.limitMs}`),
    'Goodput (req/s)',
    'Output tok/s',
  ];
  const rows = [...c.probes]
    .sort((a, b) => a.load - b.load)
    .map((p) => [
      c.mode === 'rate' ? fmtNumber(p.load) : String(p.load),
      p.load === c.capacity ? `${p.verdict} (capacity)` : p.verdict,
      ...p.slos.map((j) =>
        j.valueMs === null
          ? 'n/a'
          : `${fmtNumber(j.valueMs)}${j.ci ? ` [${fmtNumber(j.ci[0])}, ${fmtNumber(j.ci[1])}]` : ''}`,
      ),
      p.goodputReqPerSec === null ? '–' : fmtNumber(p.goodputReqPerSec),
      p.outputTokPerSec === null ? '–' : Math.round(p.outputTokPerSec).toLocaleString('en-US'),
    ]);
  return { header, rows };
}
