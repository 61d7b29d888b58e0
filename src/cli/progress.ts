import { isPooling } from '../shared/endpoint-kinds.js';
import cliProgress from 'cli-progress';
import type { RunEvent } from '../shared/events.js';
import { lengthsText, loadText } from '../shared/level-load.js';
import { fmtDurationMs, fmtNumber, fmtShare, fmtValue } from '../shared/format.js';
import { metric } from '../shared/metrics.js';
import { offeredText, prefixCacheHitRate } from '../shared/report-columns.js';
import { stripControls } from '../shared/control-chars.js';
import { barStream } from './terminal-output.js';
import {
  aboutDuration,
  createPaceState,
  estimateTimeLeft,
  foldPace,
  runClockNow,
  type PaceState,
} from '../shared/run-estimate.js';

/** What the progress lines read besides the events: the wall clock (a test passes its own). */
export interface ProgressOptions {
  wallNow?: () => number;
}

/** The run's time left in words, on its own clock: "run left about 3 min", or "estimating" before a pace is measured. */
function runLeftText(pace: PaceState, wallNowMs: number, lastEndMs: number): string {
  const left = estimateTimeLeft(pace, runClockNow(pace, wallNowMs) ?? lastEndMs).run;
  return left === null ? 'run left: estimating…' : `run left ${aboutDuration(left)}`;
}

/** A quarter step (0, 25, 50, 75, 100) of done out of total. */
const quarter = (done: number, total: number): number => (total > 0 ? Math.floor((done / total) * 4) * 25 : 100);

/** A level's result line: throughput, TTFT and what else the level measured. */
function levelLine(label: string, l: Extract<RunEvent, { type: 'level-finished' }>['level']): string {
  // Reasoning streams: the first answer token (TTFO) beside TTFT, which a reasoning token already ends.
  const ttfo = l.ttfoMs ? `, TTFO p50 ${fmtDurationMs(l.ttfoMs.p50)}` : '';
  // Multi-turn: TTFT p50 of each turn, first to last.
  const perTurn = l.byTurn ? ` (by turn ${l.byTurn.map((t) => fmtDurationMs(t.ttftMs.p50)).join('/')})` : '';
  // Workloads that share prefixes: the prefix-cache hit rate beside TTFT, which it lowers.
  const hit = prefixCacheHitRate(l);
  const cache = typeof hit === 'number' && hit > 0 ? `, prefix-cache hits ${fmtShare(hit)}` : '';
  // Multi-turn: turns never sent because an earlier turn of their conversation failed.
  const skipped = l.skippedTurns ? `, ${l.skippedTurns} later turns not sent` : '';
  // The load really offered: the level is named by the asked one, this says whether it was held.
  const offered = l.offered ? `, offered ${offeredText(l.offered, l.scheduleLagMs?.p99)}` : '';
  // A pooling level (embeddings, rerank) generates nothing: its figures are inputs/s and E2E.
  const pooling = l.endpoint !== undefined && isPooling(l.endpoint);
  const [out, ttft] = pooling
    ? [metric('inputs_s'), metric('e2e_p50_ms')]
    : [metric('output_tok_s'), metric('ttft_p50_ms')];
  const figures = `${fmtNumber(out.level(l))} ${out.label}, ${ttft.label} ${fmtValue(ttft.level(l), ttft.unit)}`;
  return `  ${label}: ${figures}${perTurn}${ttfo}${cache}${offered}, ${l.failed} failed${skipped}`;
}

/** A phase in the bar's words: prompt building with its count, a round by number. */
function phaseWord(event: Extract<RunEvent, { type: 'phase' }>): string {
  if (event.phase === 'measure') return `round ${(event.round ?? 0) + 1}`;
  if (event.phase !== 'prompts' || event.total === undefined) return event.phase;
  return event.done ? `prompts ${count(event.done)}/${count(event.total)}` : 'calibrating prompt length';
}

const count = (n: number): string => n.toLocaleString('en-US');

/** A level as the progress names it: its load, then its input and output lengths (or "file"). */
function levelLabel(event: Extract<RunEvent, { type: 'level-started' }>): string {
  const load = event.rate !== undefined ? `rate ${event.rate}/s` : loadText(event);
  if (isPooling(event.endpoint)) return `${load} ${lengthsText(event, true)}`;
  return `${load} in=${event.inputFromFile ? 'file' : event.inputLen} out=${event.outputFromFile ? 'file' : event.outputLen}`;
}

/** A started bar for one level of `total` requests on a TTY. */
function levelBar(stream: NodeJS.WriteStream, label: string, total: number): cliProgress.SingleBar {
  const bar = new cliProgress.SingleBar(
    {
      format: `${stripControls(label).padEnd(24)} {bar} {value}/{total} req  {phase}  {left}`,
      hideCursor: true,
      // The bar's cursor moves bypass the output filter; its text is the line above, filtered.
      stream: barStream(stream) as unknown as NodeJS.WritableStream,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { phase: 'prompts', left: '' });
  return bar;
}

/** Renders run events: a bar per level on a TTY, plain lines otherwise (logs, CI). */
export function createProgressRenderer(
  stream: NodeJS.WriteStream,
  verbose: boolean,
  options: ProgressOptions = {},
): (event: RunEvent) => void {
  const tty = Boolean(stream.isTTY);
  const wallNow = options.wallNow ?? Date.now;
  const pace = createPaceState();
  let bar: cliProgress.SingleBar | null = null;
  let label = '';
  let lastPlainPct = -1;
  let lastPromptPct = -1;
  const line = (text: string): void => {
    if (bar) bar.stop();
    bar = null;
    stream.write(`${text}\n`);
  };
  const onPhase = (event: Extract<RunEvent, { type: 'phase' }>): void => {
    if (bar) return void bar.update({ phase: phaseWord(event) });
    if (event.phase !== 'prompts' || event.total === undefined) return;
    // Plain lines: prompt building said at its start and each quarter, as requests are.
    const pct = event.done ? quarter(event.done, event.total) : 0;
    if (event.done && pct <= lastPromptPct) return;
    lastPromptPct = pct;
    stream.write(`  ${label}: ${phaseWord(event)}${event.done ? '' : ` (${count(event.total)} prompts)`}\n`);
  };
  const onDone = (event: Extract<RunEvent, { type: 'request-done' }>): void => {
    const left = runLeftText(pace, wallNow(), event.endMs);
    if (bar) return void bar.update(event.done, { left });
    const pct = quarter(event.done, event.total);
    if (pct <= lastPlainPct) return;
    lastPlainPct = pct;
    stream.write(`  ${label}: ${event.done}/${event.total} requests, ${left}\n`);
  };
  return (event) => {
    foldPace(pace, event);
    switch (event.type) {
      case 'run-started':
        line(
          `servebench: run ${event.runId}${event.simulated ? ' (SIMULATED engine: numbers are not from a GPU)' : ''}`,
        );
        break;
      case 'server-state':
        // A failed start is said once, by the command's own last line.
        if (event.state !== 'failed' || verbose)
          line(`server: ${event.state}${event.detail ? ` — ${event.detail}` : ''}`);
        break;
      case 'server-progress':
        line(`server: ${event.message}`);
        break;
      case 'server-log':
        if (verbose) line(`  | ${event.line}`);
        break;
      case 'message':
        line(`${event.severity === 'info' ? 'note' : event.severity}: ${event.text}`);
        break;
      case 'server-config':
        line(`server configuration ${event.index + 1} of ${event.total}: (re)starting the server`);
        break;
      case 'level-started':
        label = levelLabel(event);
        lastPlainPct = -1;
        lastPromptPct = -1;
        if (tty) {
          if (bar) bar.stop();
          bar = levelBar(stream, label, event.warmupRequests + event.measuredRequests);
        } else {
          stream.write(
            `level ${event.levelIndex + 1}: ${label} (${event.warmupRequests} warm-up + ${event.measuredRequests} measured)\n`,
          );
        }
        break;
      case 'phase':
        onPhase(event);
        break;
      case 'request-done':
        onDone(event);
        break;
      case 'level-finished': {
        if (bar) {
          bar.stop();
          bar = null;
        }
        stream.write(`${levelLine(label, event.level)}\n`);
        break;
      }
      case 'run-finished':
        if (bar) bar.stop();
        bar = null;
        break;
      default:
        break;
    }
  };
}
