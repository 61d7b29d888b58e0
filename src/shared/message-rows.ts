import { levelTitle, variantLabel } from './report-columns.js';
import { MAX_RUN_MESSAGES, type RunMessage, type RunRecord } from './run-record.js';

/** One message of a run as the reports and the app show it. */
export interface MessageRow {
  severity: RunMessage['severity'];
  /** Time since the run started, as m:ss (h:mm:ss past an hour). */
  time: string;
  /** The level or server configuration it belongs to; empty when neither. */
  where: string;
  text: string;
  /** How many times it was said, when more than once. */
  count?: number;
}

function clockText(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60));
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${mm.padStart(2, '0')}:${ss}` : `${mm}:${ss}`;
}

function whereText(record: RunRecord, m: RunMessage): string {
  const level = m.levelIndex === undefined ? undefined : record.levels[m.levelIndex];
  if (level) return levelTitle(level);
  if (m.serverConfigIndex === undefined) return '';
  const sample = record.levels.find((l) => l.serverConfigIndex === m.serverConfigIndex && l.serverVariant);
  return sample ? `server ${variantLabel(sample, true)}` : `server configuration ${m.serverConfigIndex + 1}`;
}

/** The run's messages in order, times counted from the run's start; none for a run that said none (or an older one). */
export function messageRows(record: RunRecord): MessageRow[] {
  // atMs is on the run's clock, whose origin may lie a little before startedAt.
  const startMs = Date.parse(record.startedAt) - Date.parse(record.clock.originWall);
  const offset = Number.isFinite(startMs) ? startMs : 0;
  return (record.messages ?? []).map((m) => ({
    severity: m.severity,
    time: clockText(m.atMs - offset),
    where: whereText(record, m),
    text: m.text,
    ...(m.count !== undefined && m.count > 1 ? { count: m.count } : {}),
  }));
}

/** A line saying how many messages the run left out past its limit, or null. */
export function messagesLeftOutText(record: RunRecord): string | null {
  const n = record.messagesLeftOut ?? 0;
  return n > 0
    ? `${n} more message${n === 1 ? '' : 's'} not kept (the run keeps the first ${MAX_RUN_MESSAGES} distinct ones)`
    : null;
}
