import type { EngineKind, ServerConfig } from '../../../shared/config.js';
import type { EngineDescription } from '../../../shared/engines.js';
import type { EngineSample } from '../../../shared/telemetry.js';
import type { ServerFailure } from '../types.js';

/** Where and how one launch happens; everything an engine needs beyond the config. */
export interface LaunchContext {
  /** Host to bind (config.host). */
  host: string;
  /** The port actually used (a free one when config.port is 0). */
  port: number;
  /** Run folder: generated config files go here. */
  runDir: string;
  /** Largest concurrency of the sweep. */
  maxConcurrency?: number;
  /** servebench's CLI script (sim only). */
  cliScript?: string;
  /** Node binary for the sim (default process.execPath). */
  nodePath?: string;
}

/** The exact command to run, never through a shell, plus files to write first and notes for the user. */
export interface LaunchPlan {
  command: string;
  args: string[];
  /** Files to write before launch (absolute paths). */
  files: Array<{ path: string; content: string }>;
  /** Things servebench decided for the user (e.g. SGLang max-running-requests for diffusion). */
  messages: string[];
  /** The model name requests must carry, when known before launch. */
  model?: string;
  /** Fake GPU state file (sim). */
  gpuStateFile?: string;
  /** Readiness path when it depends on the config (command --health); else the engine's healthPath. */
  healthPath?: string;
}

/** A start-up milestone recognised in the engine's log. */
export interface ProgressPattern {
  key: 'loading' | 'weights' | 'kv-cache' | 'max-concurrency' | 'graphs' | 'http' | 'max-running-requests';
  pattern: RegExp;
  message: (m: RegExpMatchArray) => string;
  value?: (m: RegExpMatchArray) => number | undefined;
  /** max-concurrency: the request size (tokens) the value holds for (vLLM's N, its max model length). */
  perRequestTokens?: (m: RegExpMatchArray) => number | undefined;
}

/** A known fatal log line and the one fix that goes with it. */
export interface FailurePattern {
  kind: ServerFailure['kind'];
  pattern: RegExp;
  message: (m: RegExpMatchArray) => string;
  fix: (m: RegExpMatchArray) => string;
}

/** One Prometheus series: a name, optionally only the samples whose labels match. */
export type MetricRef = string | { name: string; labels: Record<string, string> };

/** Prometheus names an engine exports for each EngineSample field (first present wins; aliases across versions). */
export type EngineMetricNames = Partial<Record<Exclude<keyof EngineSample, 'tMs'>, MetricRef[]>>;

/** How servebench finds an engine and reads its version before launching it. */
export type EngineProbeSpec =
  | {
      /** `PYTHON -c "import PKG; print(PKG.__version__)"`; `-m HELP_MODULE --help` lists the quantizations. */
      type: 'python';
      pkg: string;
      helpModule: string;
    }
  | {
      /** A binary on PATH or at a configured path; `BINARY --version` (output parsed by `version`). */
      type: 'binary';
      binary: (config: ServerConfig) => string;
      versionArgs: string[];
      version: (output: string) => string | undefined;
      /** The flag that names another binary (for the fix line). */
      flag: string;
    };

/** Everything servebench knows about one engine. Adding an engine is one such module and one registry line. */
export interface EngineModule {
  readonly kind: EngineKind;
  /** Name, hint, form fields, install hint (shared with the app). */
  readonly description: EngineDescription;
  /** Found and versioned before launch; absent: nothing to probe (sim, command, attach). */
  readonly probe?: EngineProbeSpec;
  /** What the app says in place of a probe's answer when there is nothing to probe (the simulator is built in). */
  readonly noProbeNote?: string;
  readonly healthPath: string;
  /** A log line that must also have been seen before the server counts as ready (SGLang). */
  readonly readyLine?: RegExp;
  readonly progress: ProgressPattern[];
  readonly metricsPath?: string;
  readonly metricNames?: EngineMetricNames;
  /** The engine's own fatal log lines, most specific first; the common ones (common.ts) follow. */
  readonly failures: FailurePattern[];
  /** The flag that sizes its GPU memory, for OOM fixes. */
  readonly memoryHint?: string;
  /** How a request gets more context, in the engine's own flags: the clause a context-limit refusal ends with. */
  readonly contextFix?: string;
  /** Why at most `n` requests run at once, in the engine's own words (the concurrency warning's reason). */
  readonly runningLimit?: (n: number) => string;
  /** The fix when the launch command cannot be run at all (ENOENT, EACCES). */
  readonly spawnFix: string;
  /** Flags this config needs the installed engine to have, checked against its own `--help` before launch. */
  helpRequires?(config: ServerConfig): Array<{ flag: string; why: string }>;
  /** Builds the launch command. Pure: no I/O. */
  plan(config: ServerConfig, ctx: LaunchContext): LaunchPlan;
  /** Warnings before the run, from the config and the largest request of the sweep. */
  preRunWarnings?(config: ServerConfig, request: { inputTokens: number; outputTokens: number }): string[];
}
