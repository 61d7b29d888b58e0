import cliProgress from 'cli-progress';
import type { RunEvent } from '../shared/events.js';
import { loadText } from '../shared/level-load.js';
import { fmtDurationMs, fmtNumber, fmtShare, fmtValue } from '../shared/format.js';
import { metric } from '../shared/metrics.js';
import { offeredText, prefixCacheHitRate } from '../shared/report-columns.js';
import { stripControls } from '../shared/control-chars.js';
import { barStream } from './terminal-output.js';

/** Renders run events: a bar per level on a TTY, plain lines otherwise (logs, CI). */
export function createProgressRenderer(stream: NodeJS.WriteStream, verbose: boolean): (event: RunEvent) => void {
  const tty = Boolean(stream.isTTY);
  let bar: cliProgress.SingleBar | null = null;
  let label = '';
  let lastPlainPct = -1;
  const line = (text: string): void => {
    if (bar) bar.stop();
    bar = null;
    stream.write(`${text}\n`);
  };
  return (event) => {
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
      case 'level-started':
        label = `${event.rate !== undefined ? `rate ${event.rate}/s` : loadText(event)} in=${event.inputFromFile ? 'file' : event.inputLen} out=${event.outputFromFile ? 'file' : event.outputLen}`;
        lastPlainPct = -1;
        if (tty) {
          if (bar) bar.stop();
          bar = new cliProgress.SingleBar(
            {
              format: `${stripControls(label).padEnd(24)} {bar} {value}/{total} req  {phase}`,
              hideCursor: true,
              // The bar's cursor moves bypass the output filter; its text is the line above, filtered.
              stream: barStream(stream) as unknown as NodeJS.WritableStream,
              clearOnComplete: false,
            },
            cliProgress.Presets.shades_classic,
          );
          bar.start(event.warmupRequests + event.measuredRequests, 0, { phase: 'prompts' });
        } else {
          stream.write(
            `level ${event.levelIndex + 1}: ${label} (${event.warmupRequests} warm-up + ${event.measuredRequests} measured)\n`,
          );
        }
        break;
      case 'phase':
        bar?.update({ phase: event.phase === 'measure' ? `round ${(event.round ?? 0) + 1}` : event.phase });
        break;
      case 'request-done':
        if (bar) bar.update(event.done);
        else {
          const pct = Math.floor((event.done / event.total) * 4) * 25;
          if (pct > lastPlainPct) {
            lastPlainPct = pct;
            stream.write(`  ${label}: ${event.done}/${event.total} requests\n`);
          }
        }
        break;
      case 'level-finished': {
        const l = event.level;
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
        const [out, ttft] = [metric('output_tok_s'), metric('ttft_p50_ms')];
        const figures = `${fmtNumber(out.level(l))} ${out.label}, ${ttft.label} ${fmtValue(ttft.level(l), ttft.unit)}`;
        const text = `  ${label}: ${figures}${perTurn}${ttfo}${cache}${offered}, ${l.failed} failed${skipped}`;
        if (bar) {
          bar.stop();
          bar = null;
        }
        stream.write(`${text}\n`);
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
