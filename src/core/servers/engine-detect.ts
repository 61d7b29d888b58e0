import { ServerConfigSchema } from '../../shared/config.js';
import type { ServerConfig } from '../../shared/config.js';
import type { EngineDetection, EngineProbeRequest } from '../../shared/contract.js';
import { parseQuantizationChoices, probeCommand, probeEngine, readEngineHelp, runCapture } from './engine-probe.js';
import { engineFor } from './engines/index.js';
import { redactLine, secretValues } from './redact.js';

/** How the app's engine look-up runs: bounded in time, cached a short while, never many at once. */
export interface EngineDetectorOptions {
  /** The environment the probes run in (the engines' own); default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Limit of each command (the version, the --help), ms; a real vLLM imports torch for both (default 60 s). */
  timeoutMs?: number;
  /** How long an answer is reused, ms (default 30 s): a re-typed path answers at once, an install is seen soon. */
  ttlMs?: number;
  /** Probes running at once; past this a request is answered "busy" (default 4). */
  maxInFlight?: number;
  /** Answers kept (default 64): the oldest goes first. */
  maxEntries?: number;
  now?: () => number;
  run?: typeof runCapture;
}

/** The app's engine look-up. */
export interface EngineDetector {
  /** Never rejects: every problem is an answer with `found: false` and one line. */
  detect(request: EngineProbeRequest): Promise<EngineDetection>;
}

/** The request as a server config: where the engine is, under the setting its module looks it up with. */
function configOf(request: EngineProbeRequest): ServerConfig {
  const server: Record<string, unknown> = { engine: request.engine };
  const key = engineFor(request.engine).probeSetting;
  const value = request.where?.trim();
  if (key && value) server[key] = value;
  return ServerConfigSchema.parse(server);
}

/** The cache key: the engine and only the path it uses. */
const keyOf = (config: ServerConfig): string => `${config.engine}\u0000${probeCommand(config) ?? ''}`;

async function lookUp(
  config: ServerConfig,
  options: { env: NodeJS.ProcessEnv; timeoutMs: number; run: typeof runCapture },
): Promise<EngineDetection> {
  const engine = engineFor(config.engine);
  const base = { engine: config.engine, name: engine.description.name };
  const spec = engine.probe;
  if (!spec) return { ...base, probed: false, found: true, message: engine.noProbeNote };
  // Both import the engine: side by side, the form waits for one import's time, not two.
  const [probe, help] = await Promise.all([
    probeEngine(config, options),
    spec.type === 'python' && spec.helpModule && probeCommand(config)
      ? readEngineHelp(probeCommand(config) as string, spec.helpModule, options)
      : Promise.resolve(undefined),
  ]);
  const secrets = secretValues(config, options.env);
  if (!probe.ok)
    return {
      ...base,
      probed: true,
      found: false,
      installHint: engine.description.install,
      message: redactLine(probe.failure.message, secrets),
      fix: redactLine(probe.failure.fix, secrets),
    };
  const quantizations = help === undefined ? undefined : parseQuantizationChoices(help);
  return {
    ...base,
    probed: true,
    found: true,
    version: probe.version,
    where: probe.where,
    ...(quantizations ? { quantizations: [...new Set(quantizations)] } : {}),
  };
}

/**
 * Looks up an installed engine for the app's form, as its module says (the same probe as before a launch):
 * found or not, its version, and the quantization methods its own --help lists. Each command is time-limited,
 * an answer is reused for `ttlMs` per (engine, python or binary), and a request for one already being looked
 * up waits for that one.
 */
export function createEngineDetector(options: EngineDetectorOptions = {}): EngineDetector {
  const env = options.env ?? process.env;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const ttlMs = options.ttlMs ?? 30_000;
  const maxInFlight = options.maxInFlight ?? 4;
  const maxEntries = options.maxEntries ?? 64;
  const now = options.now ?? Date.now;
  const run = options.run ?? runCapture;
  const cache = new Map<string, { answer: Promise<EngineDetection>; settledAt?: number }>();
  const inFlight = (): number => [...cache.values()].filter((e) => e.settledAt === undefined).length;

  return {
    async detect(request) {
      let config: ServerConfig;
      try {
        config = configOf(request);
      } catch (error) {
        const name = engineFor(request.engine).description.name;
        return { engine: request.engine, name, probed: false, found: false, message: (error as Error).message };
      }
      const key = keyOf(config);
      const kept = cache.get(key);
      if (kept && (kept.settledAt === undefined || now() - kept.settledAt < ttlMs)) return kept.answer;
      cache.delete(key);
      if (inFlight() >= maxInFlight) {
        const name = engineFor(config.engine).description.name;
        return {
          engine: config.engine,
          name,
          probed: false,
          found: false,
          busy: true,
          message: `${maxInFlight} engine look-ups are running: try again once they have answered`,
        };
      }
      const entry: { answer: Promise<EngineDetection>; settledAt?: number } = {
        answer: lookUp(config, { env, timeoutMs, run }).catch((error: unknown): EngineDetection => ({
          engine: config.engine,
          name: engineFor(config.engine).description.name,
          probed: true,
          found: false,
          message: `the look-up failed: ${(error as Error)?.message ?? String(error)}`,
        })),
      };
      cache.set(key, entry);
      while (cache.size > maxEntries) cache.delete(cache.keys().next().value as string);
      void entry.answer.then(() => (entry.settledAt = now()));
      return entry.answer;
    },
  };
}
