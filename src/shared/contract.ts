import { z } from 'zod';
import { BenchConfigSchema, EngineKindSchema } from './config.js';
import type { BenchConfig, EngineKind, ServerConfigSchema } from './config.js';
import type { RunEvent } from './events.js';
import type { RequestRecord } from './request-record.js';
import type { RunRecord, RunStatus } from './run-record.js';
import type { RunHeadline } from './run-headline.js';
import type { RunPlan } from './run-estimate.js';
import type { LatencyDistribution } from './latency-bins.js';
import type { ClientSample, EngineSample, GpuSample } from './telemetry.js';
import { AppSettingsSchema } from './settings.js';
import type { AppSettings, SettingsAnswer } from './settings.js';

/** A line of the run list. */
export interface RunSummary {
  id: string;
  dir: string;
  label: string;
  startedAt: string;
  status: RunStatus;
  simulated: boolean;
  levels: number;
  /** The engine and model (for filtering the list); absent in records that lack them. */
  engine?: string;
  model?: string;
  /** Set when the folder's run.json cannot be read (damaged, or from a newer servebench): why, in one line. */
  unreadable?: string;
  /** Its verdict and headline figures (absent for an unreadable folder). */
  headline?: RunHeadline;
}

/** A ready-made server setup (resources/presets): its server fields fill the new-run form. */
export interface PresetSummary {
  name: string;
  description: string;
  server?: z.input<typeof ServerConfigSchema>;
}

/** A run's telemetry over time (telemetry.jsonl), on the run's clock. */
export interface RunTelemetry {
  gpu: GpuSample[];
  engine: EngineSample[];
  /** The load generator's own health (event-loop lag); absent from an older core. */
  client?: ClientSample[];
}

/** A stretch of the run's clock, in seconds: the x range of a zoomed chart. */
export interface TimeWindow {
  fromS: number;
  toS: number;
}

/** Pixel columns a request chart is thinned to by default (a wide screen at 2x), and the most asked for. */
export const REQUEST_CHART_COLUMNS = 1600;
export const REQUEST_CHART_COLUMNS_MAX = 8192;
/** The most request records one getRequests answer carries: zoom in (a window) to see the rest. */
export const REQUESTS_PAGE_MAX = 2000;

/**
 * TTFT and E2E of the measured requests over time ([time s, ms] points), thinned on the core to what a screen
 * shows: per pixel column its lowest and highest value of each series, so no extreme is lost.
 */
export interface RequestChart {
  ttft: Array<[number, number]>;
  e2e: Array<[number, number]>;
  /** [bin middle s, output tok/s] of the measured requests (src/shared/output-rate.ts); absent from an older core. */
  outputRate?: Array<[number, number]>;
  /** Measured requests in the window (every one lies within a drawn column's low..high). */
  requests: number;
  columns: number;
  /** The window asked for; null: the whole run. */
  window: TimeWindow | null;
  /** What a reader should know (lines of requests.jsonl that could not be read ...), one line each. */
  notes: string[];
}

/** Full request records of a run (or of a window of it), at most REQUESTS_PAGE_MAX. */
export interface RequestPage {
  requests: RequestRecord[];
  /** Requests in the window (or the run); more than `requests.length` when the page is full. */
  total: number;
  truncated: boolean;
  window: TimeWindow | null;
  notes: string[];
}

/** What a finished run exports as (`servebench report --format` takes the same names). */
export type ExportFormat = 'html' | 'pdf' | 'md' | 'csv' | 'json' | 'vllm-json' | 'llmd-benchmark-report';
/** The formats the contract renders as text; pdf is the host printing the html (Electron's printToPDF, the browser's print). */
export type TextExportFormat = Exclude<ExportFormat, 'pdf'>;

/** The app's Export menu, in order, with the name people see. */
export const EXPORT_CHOICES: readonly { format: ExportFormat; label: string }[] = [
  { format: 'html', label: 'HTML report' },
  { format: 'pdf', label: 'PDF' },
  { format: 'md', label: 'Markdown' },
  { format: 'csv', label: 'CSV (one row per level)' },
  { format: 'json', label: 'JSON (the run record)' },
  { format: 'vllm-json', label: 'vllm-json (vllm bench serve --save-result)' },
];

/** One export of a run, ready to save: secrets already removed. */
export interface RunExport {
  format: TextExportFormat;
  /** A file name to offer, e.g. `20261130T094800Z-demo.html`. */
  fileName: string;
  mediaType: string;
  text: string;
}

/** What a comparison of runs renders as (`servebench compare --format` takes the same names). */
export type CompareFormat = 'html' | 'md';
/** The most runs one comparison takes: past this the tables and charts stop being readable. */
export const COMPARE_MAX_RUNS = 12;

/** A comparison of finished runs, ready to show or save: secrets already removed. */
export interface RunComparison {
  format: CompareFormat;
  /** A file name to offer, e.g. `compare-20261130T094800Z-a-vs-20261130T101500Z-b.html`. */
  fileName: string;
  mediaType: string;
  /** The whole report: for html one self-contained page with no script (a sandboxed frame shows it). */
  text: string;
  /** Series compared (a server sweep gives one per configuration) and loads they share. */
  series: number;
  levels: number;
}

/** Which engine to look for, and where: the value of the setting its module looks it up with (empty: its default). */
export interface EngineProbeRequest {
  engine: EngineKind;
  /** The interpreter of a Python engine or the binary of a binary engine (the engine's probe setting). */
  where?: string;
}

/** What the app shows beside the Python / binary field: the installed engine, or what to install. */
export interface EngineDetection {
  engine: EngineKind;
  /** The engine's display name (vLLM, llama.cpp ...). */
  name: string;
  /** False for engines servebench has nothing to look for (the simulator, a command, an attached server). */
  probed: boolean;
  /** The engine can be launched: found with a version, or built in. */
  found: boolean;
  version?: string;
  /** The interpreter or binary it was found with. */
  where?: string;
  /** Quantization methods the installed engine's own --help lists; absent when it has none or they could not be read. */
  quantizations?: string[];
  /** Not found: how to install it (e.g. `pip install vllm`). */
  installHint?: string;
  /** One line: why it was not found, or what there is to know when nothing was probed. */
  message?: string;
  /** Not found: the one fix to try. */
  fix?: string;
  /** Nothing was looked up: other look-ups filled the service; ask again shortly. */
  busy?: boolean;
}

/** The largest path a probe request may name (PATH_MAX on Linux). */
const PROBE_PATH = z
  .string()
  .trim()
  .min(1)
  .max(4096)
  .refine((s) => !s.includes('\0'), 'a path has no NUL character');

/** The probe request as the door checks it: a known engine, paths only, nothing else. */
const EngineProbeRequestSchema = z.strictObject({
  engine: EngineKindSchema,
  where: PROBE_PATH.optional(),
});

/** What a picked file is for: a prompt file (`--prompts`) or a timed trace (`--trace`). */
const FILE_PURPOSES = ['prompts', 'trace'] as const;
export type FilePurpose = (typeof FILE_PURPOSES)[number];

/** pickFile's one line where there is no file dialog (`servebench ui` in a browser, which uploads nothing). */
export const PICK_FILE_UNAVAILABLE =
  "no file dialog here (browser): type the file's path as it is on the machine running servebench";

/** Which file the new-run form asks the desktop app's open dialog for. */
export interface PickFileRequest {
  purpose: FilePurpose;
}

/** The file picked, as a path on the machine running servebench; null when the dialog was cancelled. */
export interface PickedFile {
  path: string | null;
}

/** The run in progress, if any (one at a time: a GPU serves one benchmark). */
export interface ActiveRun {
  runId: string;
  dir: string;
  /** Secrets (API key, secret-named env and flags, URL passwords) are `***`: no client ever gets one back. */
  config: BenchConfig;
}

/**
 * The one contract between a UI and the core: request/response calls, plus RunEvents pushed to subscribers.
 * Electron IPC and the WebSocket of `servebench ui` are two thin transports over it.
 */
export interface ServebenchContract {
  /**
   * Starts a run in the background; resolves once its folder exists. Rejects with "a run is already in
   * progress: ..." if one is going or starting (the lock is taken before anything is awaited).
   */
  startRun(config: z.input<typeof BenchConfigSchema>): Promise<ActiveRun>;
  /** Cancels the active run: in-flight requests end at once, measured levels are kept. */
  cancelRun(runId: string): Promise<void>;
  activeRun(): Promise<ActiveRun | null>;
  listRuns(): Promise<RunSummary[]>;
  getRun(runId: string): Promise<RunRecord>;
  /**
   * Full request records whose send..end overlaps `window` (default the whole run), the first REQUESTS_PAGE_MAX
   * of them: a big run is opened with getRequestChart and its records fetched for a zoomed window only.
   */
  getRequests(runId: string, window?: TimeWindow): Promise<RequestPage>;
  /** The latency-over-time chart of a run (or of a window of it), thinned to `columns` pixel columns on the core. */
  getRequestChart(runId: string, window?: TimeWindow, columns?: number): Promise<RequestChart>;
  getTelemetry(runId: string): Promise<RunTelemetry>;
  /** Each level's TTFT, TPOT and E2E counted into bins on the core (a big run's requests never cross the wire). */
  getLatencyDistribution(runId: string): Promise<LatencyDistribution>;
  listPresets(): Promise<PresetSummary[]>;
  /**
   * A finished run rendered in one format from its folder (the same exporters as `servebench report`), with
   * every secret removed. Rejects for the run in progress: its folder is not complete yet.
   */
  exportRun(runId: string, format: TextExportFormat): Promise<RunExport>;
  /**
   * Two or more finished runs side by side, against the first (the same code as `servebench compare`): what
   * differs in their conditions, then per load the ratios with 95 % intervals and a verdict.
   */
  compareRuns(runIds: string[], format: CompareFormat): Promise<RunComparison>;
  /**
   * The engine as installed: found or not, its version and the quantization methods its own --help lists,
   * with the install hint when missing. Time-limited and cached a short while per (engine, where).
   */
  probeEngine(request: EngineProbeRequest): Promise<EngineDetection>;
  /**
   * What a config's run will send and how long it will take, before Start: its levels, rounds and requests
   * (warm-up too), at the arrival rate (open loop) or the pace `fromRunId`'s run kept (a re-run). Rejects with
   * the one line startRun would give for a config it refuses.
   */
  planRun(config: z.input<typeof BenchConfigSchema>, fromRunId?: string): Promise<RunPlan>;
  /**
   * The events of the run in progress so far, from its run-started (empty when none is going): a view
   * that opens or reloads mid-run folds them to rebuild its live run. Events pushed after the answer
   * are newer; events pushed before it are in it too (its run-started resets the view, so they do no harm).
   */
  liveEvents(): Promise<ContractEvent[]>;

  // Settings (the desktop app's user-data folder; secrets sealed by the OS keychain, or in memory only).
  /** The saved settings, secrets filled back in; a damaged file reads as none. */
  getSettings(): Promise<SettingsAnswer>;
  /** Saves what is given (other settings are kept) and answers the settings now. */
  saveSettings(settings: AppSettings): Promise<SettingsAnswer>;

  // Managing past runs (ids are folder names under the runs folder; the run in progress is refused).
  /** Gives a run a new label (in its run.json); the folder keeps its name. */
  renameRun(runId: string, label: string): Promise<void>;
  /** Moves a run folder to the trash: the OS trash in the desktop app, else `<runs>/.trash/` (`movedTo`). */
  deleteRun(runId: string): Promise<{ movedTo: string | null }>;
  /** Opens a run folder in the file manager where the host can (desktop app); else answers its path to copy. */
  openRunFolder(runId: string): Promise<{ path: string; opened: boolean }>;
  /**
   * Desktop app only: the OS open-file dialog for a workload file (.jsonl/.json). Elsewhere (`servebench ui`)
   * it rejects in one line: the browser types the path, a file on the machine running servebench.
   */
  pickFile(request: PickFileRequest): Promise<PickedFile>;
}

/** Options of a subscription to the pushed events. */
interface SubscribeOptions {
  /** First deliver the run in progress so far (as `liveEvents()` answers), then every new event. */
  replay?: boolean;
}

/** The pushed half of the contract: what a transport subscribes to, once per client. */
export interface ContractEvents {
  /** Calls `listener` with every event (secrets already redacted); returns the function that unsubscribes. */
  subscribe(listener: (event: ContractEvent) => void, options?: SubscribeOptions): () => void;
}

export type ContractMethod = keyof ServebenchContract;

/** A window as the door checks it: finite seconds, from before to. */
const TimeWindowSchema = z
  .strictObject({ fromS: z.number().finite(), toS: z.number().finite() })
  .refine((w) => w.toS > w.fromS, 'a window ends after it starts (toS > fromS)');

/** Runtime validation of every call's arguments at the transport boundary (the renderer is not trusted). */
export const contractArgs: { [K in ContractMethod]: z.ZodType<Parameters<ServebenchContract[K]>> } = {
  startRun: z.tuple([BenchConfigSchema.partial().passthrough()]) as unknown as z.ZodType<
    Parameters<ServebenchContract['startRun']>
  >,
  cancelRun: z.tuple([z.string().min(1)]),
  activeRun: z.tuple([]),
  listRuns: z.tuple([]),
  getRun: z.tuple([z.string().min(1)]),
  getRequests: z.tuple([z.string().min(1), TimeWindowSchema.optional()]),
  getRequestChart: z.tuple([
    z.string().min(1),
    TimeWindowSchema.optional(),
    z.number().int().min(1).max(REQUEST_CHART_COLUMNS_MAX).optional(),
  ]),
  getTelemetry: z.tuple([z.string().min(1)]),
  getLatencyDistribution: z.tuple([z.string().min(1)]),
  listPresets: z.tuple([]),
  exportRun: z.tuple([z.string().min(1), z.enum(['html', 'md', 'csv', 'json', 'vllm-json'])]),
  compareRuns: z.tuple([z.array(z.string().min(1)).min(2).max(COMPARE_MAX_RUNS), z.enum(['html', 'md'])]),
  probeEngine: z.tuple([EngineProbeRequestSchema]),
  planRun: z.tuple([BenchConfigSchema.partial().passthrough(), z.string().min(1).optional()]) as unknown as z.ZodType<
    Parameters<ServebenchContract['planRun']>
  >,
  liveEvents: z.tuple([]),
  getSettings: z.tuple([]),
  saveSettings: z.tuple([AppSettingsSchema]),
  renameRun: z.tuple([z.string().min(1), z.string().trim().min(1, 'give the run a label').max(200)]),
  deleteRun: z.tuple([z.string().min(1)]),
  openRunFolder: z.tuple([z.string().min(1)]),
  pickFile: z.tuple([z.strictObject({ purpose: z.enum(FILE_PURPOSES) })]),
};

/** The method names, for transports that expose the contract generically. */
export const CONTRACT_METHODS = Object.keys(contractArgs) as ContractMethod[];

/** What a transport pushes to the UI: every RunEvent of the active run. */
export type ContractEvent = RunEvent;
