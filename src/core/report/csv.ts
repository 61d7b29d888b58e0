import type { Exporter } from './exporter.js';
import { summaryCsv } from './summary-csv.js';

export const csvExporter: Exporter = {
  format: 'csv',
  extension: '.csv',
  mediaType: 'text/csv',
  binary: false,
  description: 'summary.csv: one row per level',
  render: async (folder) => summaryCsv(folder.record),
};
