// The run-folder module: every reader of a run folder (the app, report, compare, run --from) goes through here.
export { RUN_FILES, RUN_JSON_MAX_BYTES } from './files.js';
export { loadRun, runFolderPath } from './run-json.js';
export { streamJsonl, jsonlNotes, type JsonlReport, type BadLine } from './jsonl.js';
export { streamRequests, readTelemetry, type FolderTelemetry, type Tagged } from './read-lines.js';
export { recordSecrets, sanitizeRecord, cleanRequest, cleanSample } from './redact-folder.js';
export { loadRunFolder, REQUESTS_HELD_MAX_BYTES, type RunFolder, type RequestsLeftOut } from './load-folder.js';
export { listRuns, RUNS_INDEX_FILE, type RunListing, type ListRunsDeps } from './list-runs.js';
