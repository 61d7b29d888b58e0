// Engine modules are declarations that the config schema, the CLI, the app's form and the launcher all read:
// they import zod and src/shared only (lint holds them to it), never Node, so the renderer can read them too.
import type { z } from 'zod';
import type { EngineSample } from '../../../shared/telemetry.js';
import type { ServerFailure } from '../types.js';

/** A server config as an engine module sees it: its engine and its settings (every engine's keys may appear). */
export type AnyServerConfig = { readonly engine: string } & Readonly<Record<string, unknown>>;

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
  /** servebench's own CLI script, for an engine that runs it (the simulator); throws when it is not built. */
  cliScript?: () => string;
  /** Node binary for the simulator (default: the one running servebench). */
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
type EngineProbeSpec =
  | {
      /** `PYTHON -c "import PKG; print(PKG.__version__)"`; `-m HELP_MODULE --help` lists the quantizations. */
      type: 'python';
      pkg: string;
      helpModule?: string;
    }
  | {
      /** A binary on PATH or at a configured path; `BINARY --version` (output parsed by `version`). */
      type: 'binary';
      versionArgs: string[];
      version: (output: string) => string | undefined;
    };

/** How an engine presents itself in the app, the help and the docs. */
export interface EngineDescription {
  /** Display name. */
  readonly name: string;
  /** One line for the engine picker. */
  readonly hint: string;
  /** The engine needs --model before it can start. */
  readonly requiresModel: boolean;
  /** What --model names for this engine (the model-missing message and the form's placeholder). */
  readonly modelHint: string;
  /** How to install it (docs and the engine-missing fix). */
  readonly install: string;
}

/** What an argument mapping is told: the whole config, the launch, and where to put generated files and notes. */
export interface ArgContext {
  readonly config: AnyServerConfig;
  readonly launch: LaunchContext;
  /** Writes a file into the run folder before launch; returns its path. */
  file(name: string, content: string): string;
  /** A note for the user (shown and kept in the run record). */
  message(text: string): void;
}

/** One setting of an engine: its schema (declared once, maybe shared) and how it reaches the engine. */
export interface EngineSetting<S extends z.ZodType = z.ZodType> {
  readonly schema: S;
  /** The engine's own name for it (its flag, or what the launch does with it): help and docs. */
  readonly native: string;
  /** Its arguments when set, in the engine's order; absent: the launch itself uses it (the interpreter, the binary). */
  readonly args?: (value: NonNullable<z.output<S>>, ctx: ArgContext) => readonly string[];
  /** Values the app suggests for it with this engine (the installed engine's --help has the last word). */
  readonly suggest?: readonly string[];
}

/** Any engine setting, whatever its values (its mapping takes only its own). */
interface AnyEngineSetting {
  readonly schema: z.ZodType;
  readonly native: string;
  readonly args?: (value: never, ctx: ArgContext) => readonly string[];
  readonly suggest?: readonly string[];
}

/** An engine's settings: config key -> its setting. */
export type EngineSettings = Readonly<Record<string, AnyEngineSetting>>;

/** The config a launch of an engine sees: its own settings typed, other engines' keys possibly present. */
export type ConfigOf<S extends EngineSettings> = AnyServerConfig & {
  readonly [K in keyof S]: z.output<S[K]['schema']>;
};

/** Everything servebench knows about one engine. Adding an engine is one such module and one registry line. */
/** A cache-reset endpoint as the engine serves it (POST PATH), and the fix when it is not served (404). */
export interface CacheResetSpec {
  readonly path: string;
  readonly notServed: string;
}

export interface EngineModule<K extends string = string, S extends EngineSettings = EngineSettings> {
  readonly kind: K;
  readonly description: EngineDescription;
  /** Its settings, in the order its command line takes them. */
  readonly settings: S;
  /** Settings other engines have and this one does not: what to do instead (the "X ignores --flag" note). */
  readonly instead?: Readonly<Record<string, string>>;
  /** False: nothing is launched (a server someone else runs). */
  readonly launches: boolean;
  /** Settings it cannot start without (beside a model, which the description says). */
  readonly required?: readonly string[];
  /** The setting that chooses this engine when given (attach: --url), instead of --engine. */
  readonly chosenBy?: string;
  /** Its numbers come from a simulated engine and GPU: marked SIMULATED wherever they appear. */
  readonly simulated?: boolean;
  /** It names no program of its own (any command, an attached server): messages say "the server". */
  readonly anonymous?: boolean;
  /** Asks the running server for its version (GET /version) when no probe gave one. */
  readonly versionFromServer?: boolean;
  /** Found and versioned before launch; absent: nothing to probe (sim, command, attach). */
  readonly probe?: EngineProbeSpec;
  /** The setting naming the interpreter or binary the probe runs (the app's look-up shows beside it). */
  readonly probeSetting?: string;
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
  /**
   * How a request names its LoRA adapter: its `model` field (vLLM, SGLang; the default), or llama.cpp's
   * `lora: [{id, scale}]` with the adapter's place in the --lora list ('lora-id').
   */
  readonly loraBy?: 'model' | 'lora-id';
  /** The engine's endpoint that empties its prefix cache, and what to do where it answers 404; absent: none. */
  readonly cacheReset?: CacheResetSpec;
  /** Flags this config needs the installed engine to have, checked against its own `--help` before launch. */
  helpRequires?(config: AnyServerConfig): Array<{ flag: string; why: string }>;
  /** Builds the launch command. Pure: no I/O. */
  plan(config: AnyServerConfig, ctx: LaunchContext): LaunchPlan;
  /** Warnings before the run, from the config and the largest request of the sweep. */
  preRunWarnings?(config: AnyServerConfig, request: { inputTokens: number; outputTokens: number }): string[];
}
