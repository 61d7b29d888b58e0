import type { Exporter } from './exporter.js';

export const jsonExporter: Exporter = {
  format: 'json',
  extension: '.json',
  mediaType: 'application/json',
  binary: false,
  description: 'the run record (run.json, validated, secrets removed)',
  render: async (folder) => `${JSON.stringify(folder.record, null, 2)}\n`,
};
