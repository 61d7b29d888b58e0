import type { Exporter } from './exporter.js';
import { levelCharts } from './html/chart-data.js';
import { renderPage } from './html/template.js';
import { renderTimeline, reportTimelineSpec } from './html/timeline.js';
import { TIMELINE_SCRIPTS, UPLOT_CSS } from './html/uplot-inline.js';
import { renderXyChart } from './html/xy-chart.js';
import type { RunFolder } from './load-run-folder.js';

/**
 * The HTML report: one offline file (styles, charts as SVG, the timeline drawn by an inlined uPlot from the app's
 * own spec, and the run's data inline; nothing fetched).
 */
export function htmlReport(folder: RunFolder, now: Date = new Date()): string {
  return renderPage({
    record: folder.record,
    charts: levelCharts(folder.record).map(renderXyChart),
    timeline: renderTimeline(reportTimelineSpec(folder)),
    scripts: TIMELINE_SCRIPTS,
    styles: [UPLOT_CSS],
    notes: folder.notes,
    generatedAt: now.toISOString(),
  });
}

export const htmlExporter: Exporter = {
  format: 'html',
  extension: '.html',
  mediaType: 'text/html',
  binary: false,
  description: 'one offline HTML file: headline, table, charts, checks, messages, cost, command, environment',
  render: async (folder, context) => htmlReport(folder, context.now?.() ?? new Date()),
};
