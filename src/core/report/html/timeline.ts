import type { RunFolder } from '../load-run-folder.js';
import { LatencyColumns, runSpan } from '../../run-folder/request-view.js';
import { OutputRate, rateBinSeconds } from '../../../shared/output-rate.js';
import { timelineSpec } from '../../../shared/timeline-spec.js';
import type { TimelineSpec } from '../../../shared/timeline-spec.js';
import { REQUEST_CHART_COLUMNS } from '../../../shared/contract.js';
import { esc, scriptJson } from './escape.js';

/** The run's timeline spec from its folder: the same builder, thinning and output rate as the app's results. */
export function reportTimelineSpec(folder: RunFolder): TimelineSpec {
  const span = runSpan(folder.record);
  const thin = new LatencyColumns(span, REQUEST_CHART_COLUMNS);
  const rate = new OutputRate(rateBinSeconds(span.toS - span.fromS));
  for (const r of folder.requests) if (thin.add(r)) rate.add(r);
  const reason = folder.record.levels.find((l) => l.telemetry?.reason)?.telemetry?.reason;
  return timelineSpec({
    ...thin.points(),
    outputRate: rate.points(),
    gpu: folder.gpu,
    engine: folder.engine,
    client: folder.client,
    levels: folder.record.levels,
    gpuNote: `No GPU telemetry was recorded for this run${reason ? `: ${reason}` : '.'}`,
  });
}

/**
 * The timeline figure: the spec as inert JSON, drawn by the inlined uPlot into #timeline-panels (the report's
 * scripts, src/core/report/html/uplot-inline.ts); its key and notes are written here, escaped.
 */
export function renderTimeline(spec: TimelineSpec): string {
  const ids = spec.panels.map((p) => p.id).join(' ');
  const keys = spec.keys
    .map(
      (k) =>
        `<span class="key band" data-kind="${esc(k.kind)}"><i style="background:${esc(k.fill)}"></i>${esc(k.text)}</span>`,
    )
    .join('');
  const notes = spec.notes.map((n) => `<p class="note">${esc(n)}</p>`).join('');
  return [
    `<figure class="chart wide" id="chart-timeline" data-panels="${esc(ids)}">`,
    '<figcaption>Timeline: requests beside the GPU and the engine</figcaption>',
    '<div id="timeline-panels"></div>',
    keys ? `<div class="legend">${keys}</div>` : '',
    notes,
    '<noscript><p class="note">The timeline is drawn by a script this viewer did not run.</p></noscript>',
    `<script type="application/json" id="servebench-timeline">${scriptJson(spec)}</script>`,
    '</figure>',
  ].join('');
}
