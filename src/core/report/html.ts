import type { Exporter } from './exporter.js';
import { levelCharts } from './html/chart-data.js';
import { renderPage } from './html/template.js';
import { renderTimeline } from './html/timeline.js';
import { renderXyChart } from './html/xy-chart.js';
import type { RunFolder } from './load-run-folder.js';

/** The HTML report: one offline file (styles, charts as SVG and the run's data inline; nothing fetched). */
export function htmlReport(folder: RunFolder, now: Date = new Date()): string {
  return renderPage({
    record: folder.record,
    charts: levelCharts(folder.record).map(renderXyChart),
    timeline: renderTimeline(folder.record, folder.requests, folder.gpu),
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
