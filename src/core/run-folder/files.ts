/** The files of one run folder. */
export const RUN_FILES = {
  record: 'run.json',
  requests: 'requests.jsonl',
  summary: 'summary.csv',
  telemetry: 'telemetry.jsonl',
  serverLog: 'server.log',
} as const;

/** A run.json is summaries and messages (capped): past this it is not one servebench wrote. */
export const RUN_JSON_MAX_BYTES = 64 * 2 ** 20;
