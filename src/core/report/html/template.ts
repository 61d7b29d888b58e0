import { createHash } from 'node:crypto';
import type { Check, RunRecord } from '../../../shared/run-record.js';
import {
  ARTICLE_COLUMNS,
  TELEMETRY_COLUMNS,
  cellText,
  levelRows,
  variantLabel,
  visibleColumns,
} from '../../../shared/report-columns.js';
import type { Column, LevelRow } from '../../../shared/report-columns.js';
import { costLines, environmentFacts, headlineFacts, serverCommandText, sortedChecks, verdict } from '../facts.js';
import type { Fact } from '../facts.js';
import { esc, scriptJson } from './escape.js';
import { REPORT_CSS } from './styles.js';
import { capacitySearches, type CapacityResult } from '../../../shared/capacity.js';
import { capacityLines, capacityTable, capacityTitle } from '../../../shared/capacity-format.js';
import { TURN_TABLE_HEAD, turnTableRows } from '../../../shared/turn-table.js';
import { GROUP_TABLE_HEAD, GROUP_TABLES, groupTableRows } from '../../../shared/group-table.js';
import { TTFT_SPLIT_NOTE, ttftSplitRows } from '../../../shared/ttft-split-text.js';
import { precisionSavedText, precisionText } from '../../../shared/precision.js';
import { loadText } from '../../../shared/level-load.js';
import { workersHtml } from '../workers-section.js';
import { messageRows, messagesLeftOutText } from '../../../shared/message-rows.js';

/** Multi-turn runs: TTFT per conversation turn, one row per level and turn; nothing for other runs. */
function turnsSection(record: RunRecord): string {
  const rows = turnTableRows(record);
  if (rows.length === 0) return '';
  const head = TURN_TABLE_HEAD.map((h) => `<th>${esc(h)}</th>`).join('');
  const body = rows.map((r) => `<tr>${r.map((v) => `<td class="nw">${esc(v)}</td>`).join('')}</tr>`).join('');
  return [
    '<section id="turns"><h2>TTFT per conversation turn</h2>',
    `<table id="table-turns"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`,
    '<p class="note">Multi-turn: each turn sends the conversation so far back; TTFT in ms.</p></section>',
  ].join('');
}

/** The level per LoRA adapter and per replica, where a run has them; nothing for other runs. */
function groupsSection(record: RunRecord): string {
  return (['adapter', 'replica'] as const)
    .map((kind) => {
      const rows = groupTableRows(record, kind);
      if (rows.length === 0) return '';
      const head = GROUP_TABLE_HEAD.map((h) => `<th>${esc(h)}</th>`).join('');
      const body = rows.map((r) => `<tr>${r.map((v) => `<td class="nw">${esc(v)}</td>`).join('')}</tr>`).join('');
      return [
        `<section id="by-${kind}"><h2>${esc(GROUP_TABLES[kind].title)}</h2>`,
        `<table id="table-by-${kind}"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`,
        `<p class="note">${esc(GROUP_TABLES[kind].note)}</p></section>`,
      ].join('');
    })
    .join('');
}

/** Where each level's TTFT goes, where a run could tell. */
function ttftSplitSection(record: RunRecord): string {
  const rows = ttftSplitRows(record);
  if (rows.length === 0) return '';
  const items = rows.map((r) => `<li><b>${esc(r.level)}</b>: ${esc(r.text)}</li>`).join('');
  return `<section id="ttft-split"><h2>Where TTFT goes</h2><ul>${items}</ul><p class="note">${esc(TTFT_SPLIT_NOTE)}</p></section>`;
}

/** Whether each level reached --precision, and what stopping early saved. */
function precisionSection(record: RunRecord): string {
  const saved = precisionSavedText(record.levels);
  if (!saved) return '';
  const items = record.levels
    .map((l) => `<li><b>${esc(loadText(l, true))}</b>: ${esc(precisionText(l) ?? '')}</li>`)
    .join('');
  return `<section id="precision"><h2>Precision</h2><ul>${items}</ul><p class="note">${esc(saved)}</p></section>`;
}

/** The capacity searches' answers, their levels and knees (run with --find-capacity); one heading each when several. */
function capacitySection(searches: readonly CapacityResult[]): string {
  const one = (c: CapacityResult, i: number): string => {
    const { header, rows } = capacityTable(c);
    const head = header.map((h, j) => `<th class="${j === 1 ? 't' : ''}">${esc(h)}</th>`).join('');
    const body = rows
      .map((r) => `<tr>${r.map((v, j) => `<td class="${j === 1 ? 't nw' : 'nw'}">${esc(v)}</td>`).join('')}</tr>`)
      .join('');
    const title = searches.length > 1 ? capacityTitle(c) : null;
    return [
      title ? `<h3>${esc(title)}</h3>` : '',
      capacityLines(c)
        .map((l, j) => (j === 0 ? `<p><b>${esc(l)}</b></p>` : `<p>${esc(l)}</p>`))
        .join(''),
      `<table id="table-capacity${i === 0 ? '' : `-${i + 1}`}"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`,
    ].join('');
  };
  return [
    '<section id="capacity"><h2>Capacity</h2>',
    ...searches.map(one),
    '<p class="note">A level meets an SLO only when the percentile’s 95 % interval lies within it, fails when it lies above it, and is uncertain otherwise.</p></section>',
  ].join('');
}

function table(columns: readonly Column[], rows: readonly LevelRow[], id: string): string {
  if (rows.length === 0) return '<p class="empty">No level was measured.</p>';
  const cols = visibleColumns(columns, rows);
  const textual = (c: Column): boolean => c.key === 'checks' || c.key === 'server' || c.key === 'source';
  const cls = (c: Column): string => (textual(c) ? (c.key === 'checks' ? 't' : 't nw') : 'nw');
  const head = cols
    .map(
      (c) =>
        `<th class="${textual(c) ? 't' : ''}">${esc(c.header)}${c.unit ? `<small>${esc(c.unit)}</small>` : ''}</th>`,
    )
    .join('');
  const body = rows
    .map((r) => `<tr>${cols.map((c) => `<td class="${cls(c)}">${esc(cellText(c, r))}</td>`).join('')}</tr>`)
    .join('');
  return `<table id="${id}"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

function facts(list: readonly Fact[], cls = ''): string {
  return `<div class="facts ${cls}">${list.map((f) => `<div><b>${esc(f.label)}</b>${esc(f.value)}</div>`).join('')}</div>`;
}

/** A data attribute for a machine-readable token only: a run.json from elsewhere may hold anything there. */
function dataAttr(name: string, value: string | undefined): string {
  return value !== undefined && /^[a-z0-9][a-z0-9.-]{0,63}$/i.test(value) ? ` data-${name}="${value}"` : '';
}

function checkItem(c: Check, where = ''): string {
  const attrs = `${dataAttr('check', c.id)}${dataAttr('status', c.status)}${dataAttr('code', c.code)}`;
  return `<li${attrs}><span class="status ${esc(c.status)}">${esc(c.status.toUpperCase())}</span> <b>${esc(c.id)}</b>${where ? ` <span class="sub">${esc(where)}</span>` : ''}: ${esc(c.detail)}</li>`;
}

/** "Messages during the run": severity, time since the start, where and text; nothing when the run said none. */
function messagesSection(record: RunRecord): string {
  const rows = messageRows(record);
  if (rows.length === 0) return '';
  const items = rows.map(
    (m) =>
      `<li><span class="status ${m.severity === 'error' ? 'fail' : m.severity === 'warn' ? 'warn' : 'info'}">${esc(m.severity.toUpperCase())}</span> <span class="msg-time">${esc(m.time)}</span>${m.where ? ` <span class="sub">${esc(m.where)}</span>` : ''}: ${esc(m.text)}${m.count ? ` <span class="sub">×${esc(String(m.count))}</span>` : ''}</li>`,
  );
  const leftOut = messagesLeftOutText(record);
  return [
    '<section id="messages"><h2>Messages during the run</h2>',
    `<ul class="checks messages">${items.join('')}</ul>`,
    leftOut ? `<p class="note">${esc(leftOut)}.</p>` : '',
    '</section>',
  ].join('');
}

/** The parts the template puts together; charts come in already rendered. */
export interface ReportPage {
  record: RunRecord;
  charts: string[];
  timeline: string;
  notes: string[];
  generatedAt: string;
  /** Inline scripts run at the end of the body (the timeline's uPlot), each allowed by its hash in the CSP. */
  scripts?: readonly string[];
  /** Inline stylesheets beside the report's own (uPlot's). */
  styles?: readonly string[];
}

/** The page's Content-Security-Policy: nothing fetched; only its own inline scripts, named by their hash. */
function csp(scripts: readonly string[]): string {
  const hashes = scripts.map((s) => `'sha256-${createHash('sha256').update(s, 'utf8').digest('base64')}'`);
  const script = hashes.length > 0 ? ` script-src ${hashes.join(' ')};` : '';
  return `default-src 'none';${script} style-src 'unsafe-inline'; img-src data:`;
}

/** The whole report as one self-contained HTML document. */
export function renderPage(page: ReportPage): string {
  const { record } = page;
  const scripts = page.scripts ?? [];
  const rows = levelRows(record);
  const v = verdict(record);
  const sim = record.simulated;
  const title = `servebench report: ${record.label}${sim ? ' (SIMULATED)' : ''}`;
  const levelChecks = record.levels.flatMap((l) =>
    l.checks
      .filter((c) => c.status !== 'pass')
      .map((c) => checkItem(c, `${loadText(l, true)}${l.serverVariant ? ` ${variantLabel(l)}` : ''}`)),
  );
  const parts = [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width,initial-scale=1">',
    `<meta http-equiv="Content-Security-Policy" content="${csp(scripts)}">`,
    `<meta name="color-scheme" content="light dark"><title>${esc(title)}</title><style>${REPORT_CSS}</style>`,
    ...(page.styles ?? []).map((css) => `<style>${css}</style>`),
    '</head><body>',
    sim ? '<div class="sim-stamp" aria-hidden="true">SIMULATED</div>' : '',
    `<header><h1>${esc(record.label)}</h1><p class="sub">servebench report · run ${esc(record.id)} · started ${esc(record.startedAt)}</p>`,
    sim
      ? '<div class="sim-banner">SIMULATED: these numbers come from the built-in simulator, not a GPU. They show how servebench works, not how fast any hardware is.</div>'
      : '',
    record.status !== 'completed'
      ? `<div class="sim-banner">This run ended ${esc(record.status)}${record.error ? `: ${esc(record.error)}` : ''}. The levels below are what was measured before that.</div>`
      : '',
    facts(headlineFacts(record)).replace(`<div><b>Verdict</b>`, `<div class="verdict ${v.status}"><b>Verdict</b>`),
    '</header>',
    '<section id="results"><h2>Results</h2>',
    table(ARTICLE_COLUMNS, rows, 'table-results'),
    '<p class="note">* = level cut short. TTFT: time to the first token; TPOT: time per output token after the first; E2E: the whole request.</p></section>',
    ttftSplitSection(record),
    precisionSection(record),
    turnsSection(record),
    groupsSection(record),
    workersHtml(record),
    capacitySearches(record).length > 0 ? capacitySection(capacitySearches(record)) : '',
    `<section id="charts"><h2>Charts</h2><div class="charts">${page.charts.join('')}</div>${page.timeline}</section>`,
    '<section id="checks"><h2>Checks</h2>',
    `<ul class="checks">${sortedChecks(record.checks)
      .map((c) => checkItem(c))
      .join('')}</ul>`,
    levelChecks.length
      ? `<h3>Per level (those that did not pass)</h3><ul class="checks">${levelChecks.join('')}</ul>`
      : '',
    '</section>',
    messagesSection(record),
    `<section id="cost"><h2>Cost</h2>${costLines(record)
      .map((l) => `<p>${esc(l)}</p>`)
      .join('')}</section>`,
    '<section id="command"><h2>Server command</h2>',
    `<pre>${esc(serverCommandText(record))}</pre></section>`,
    `<section id="environment"><h2>Environment</h2>${facts(environmentFacts(record))}</section>`,
    '<section id="telemetry"><h2>Telemetry per level</h2>',
    table(TELEMETRY_COLUMNS, rows, 'table-telemetry'),
    '</section>',
    page.notes.length
      ? `<section id="notes"><h2>Notes</h2><ul>${page.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul></section>`
      : '',
    `<footer>servebench ${esc(record.environment.servebenchVersion)} · report made ${esc(page.generatedAt)} from the run folder alone${sim ? ' · SIMULATED' : ''}</footer>`,
    `<script type="application/json" id="servebench-run">${scriptJson(record)}</script>`,
    ...scripts.map((js) => `<script>${js}</script>`),
    '</body></html>',
  ];
  return parts.join('\n');
}
