import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServerConfig } from '../../shared/config.js';
import { modelProblem } from '../../shared/engines.js';
import type { RunEvent } from '../../shared/events.js';
import { LaunchSettingsSchema } from '../../shared/server-settings.js';
import { UserError } from '../errors.js';
import { findCliScript } from '../package-root.js';
import { nodeRunFs, replaceFile } from '../runs/run-fs.js';
import { engineFor, formatCommand, type EngineModule, type LaunchPlan } from './engines/index.js';
import { LAUNCH_TRANSITIONS, Lifecycle } from './lifecycle-state.js';
import { baseUrlFor } from './ports.js';
import { checkEngine, choosePort } from './preflight.js';
import { createRedactor, redactArgv } from './redact.js';
import { abortError, ServerConfigError } from './server-errors.js';
import type { ServerInfo, StartServerOptions } from './types.js';

/** What preparing a launch needs of the manager's options. */
export interface PrepareOptions {
  cliScript?: string;
  nodePath?: string;
  probeTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

/** A launch ready to spawn: the engine checked, the port chosen, the command planned and its files written. */
export interface PreparedLaunch {
  adapter: EngineModule;
  lifecycle: Lifecycle;
  plan: LaunchPlan;
  info: ServerInfo;
  /** The launch command line, secrets redacted (logged, recorded, never run). */
  command: string;
  childEnv: NodeJS.ProcessEnv;
  redactLine: (line: string) => string;
}

/** The engine's plan for this launch; a config it cannot launch is a ServerConfigError in one line. */
function planOf(adapter: EngineModule, config: ServerConfig, ctx: Parameters<EngineModule['plan']>[1]): LaunchPlan {
  try {
    return adapter.plan(config, ctx);
  } catch (error) {
    if (error instanceof UserError) throw error;
    throw new ServerConfigError((error as Error).message);
  }
}

/** Checks the config, the port and the installed engine, plans the command and writes its files; says its notes. */
export async function prepareLaunch(
  config: ServerConfig,
  opts: StartServerOptions,
  options: PrepareOptions,
  emit: (event: RunEvent) => void,
): Promise<PreparedLaunch> {
  const adapter = engineFor(config.engine);
  const signal = opts.signal;
  const parentEnv = options.env ?? process.env;
  const where = LaunchSettingsSchema.parse(config);
  const childEnv: NodeJS.ProcessEnv = { ...parentEnv, ...where.env };
  const redactLine = createRedactor(config, parentEnv);
  const throwIfAborted = (): void => {
    if (signal?.aborted) throw abortError(signal);
  };
  throwIfAborted();
  const noModel = modelProblem(config.engine, config.model);
  if (noModel) throw new ServerConfigError(noModel);
  const lifecycle = new Lifecycle(LAUNCH_TRANSITIONS, emit);
  lifecycle.to('checking', `checking ${adapter.description.name}`);
  await mkdir(opts.runDir, { recursive: true });
  const port = await choosePort(where, lifecycle);
  throwIfAborted();
  const engineVersion = await checkEngine(config, adapter, {
    env: childEnv,
    signal,
    timeoutMs: options.probeTimeoutMs,
    redactLine,
    lifecycle,
    emit,
  });
  const plan = planOf(adapter, config, {
    host: where.host,
    port,
    runDir: opts.runDir,
    maxConcurrency: opts.maxConcurrency,
    // servebench's own CLI, for an engine that runs it (the simulator): found when the plan asks for it.
    cliScript: () => {
      const script = options.cliScript ?? findCliScript();
      if (!script) throw new UserError('the simulator needs the built CLI (dist/cli.js): run `npm run build:cli`');
      return script;
    },
    nodePath: options.nodePath ?? process.execPath,
  });
  for (const file of plan.files) await replaceFile(nodeRunFs, file.path, file.content);
  for (const text of plan.messages) emit({ type: 'message', severity: 'info', text });
  for (const text of opts.largestRequest ? (adapter.preRunWarnings?.(config, opts.largestRequest) ?? []) : [])
    emit({ type: 'message', severity: 'warn', text });
  throwIfAborted();

  const baseUrl = baseUrlFor(where.host, port);
  const command = redactLine(formatCommand(plan.command, redactArgv(plan.args)));
  const info: ServerInfo = {
    engine: config.engine,
    baseUrl,
    model: plan.model ?? '',
    simulated: adapter.simulated === true,
    command,
    logFile: join(opts.runDir, 'server.log'),
    ...(engineVersion ? { engineVersion } : {}),
    ...(adapter.metricsPath ? { metricsUrl: `${baseUrl}${adapter.metricsPath}` } : {}),
    ...(plan.gpuStateFile ? { gpuStateFile: plan.gpuStateFile } : {}),
    ...(plan.messages.length > 0 ? { notes: plan.messages } : {}),
  };
  return { adapter, lifecycle, plan, info, command, childEnv, redactLine };
}
