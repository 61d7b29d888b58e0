import type { ServerConfig } from '../../shared/config.js';
import type { LaunchSettings } from '../../shared/server-settings.js';
import type { RunEvent } from '../../shared/events.js';
import { parseQuantizationChoices, probeCommand, probeEngine, readEngineHelp, runCapture } from './engine-probe.js';
import type { EngineModule } from './engines/index.js';
import type { Lifecycle } from './lifecycle-state.js';
import { pickFreePort, probePort } from './ports.js';
import { abortError, failStart, ServerConfigError } from './server-errors.js';

/** The port to bind: a free one for 0; a taken or forbidden one fails the start before anything is launched. */
export async function choosePort(config: Pick<LaunchSettings, 'host' | 'port'>, lifecycle: Lifecycle): Promise<number> {
  // vLLM binds with SO_REUSEPORT and would share a taken port silently, so check it ourselves.
  if (config.port === 0) return pickFreePort(config.host);
  const port = config.port;
  const check = await probePort(config.host, port);
  if (check.free) return port;
  return failStart(
    lifecycle,
    check.code === 'EADDRINUSE'
      ? {
          kind: 'port-in-use',
          message: `port ${port} on ${config.host} is already in use`,
          fix: `choose another --port (or omit it to pick a free one), or stop the process that holds it (ss -ltnp 'sport = :${port}')`,
          logTail: [],
        }
      : {
          kind: 'unknown',
          message: `cannot bind ${config.host}:${port} (${check.code})`,
          fix: check.code === 'EACCES' ? 'use a port above 1023' : 'check --host and --port',
          logTail: [],
        },
  );
}

/** The engine: installed, which version, and does it know the requested quantization and flags? */
export async function checkEngine(
  config: ServerConfig,
  adapter: EngineModule,
  ctx: {
    env: NodeJS.ProcessEnv;
    signal?: AbortSignal;
    timeoutMs?: number;
    redactLine: (line: string) => string;
    lifecycle: Lifecycle;
    emit: (event: RunEvent) => void;
  },
): Promise<string | undefined> {
  if (!adapter.probe) return undefined;
  const { signal, emit } = ctx;
  const displayName = adapter.description.name;
  const throwIfAborted = (): void => {
    if (signal?.aborted) throw abortError(signal);
  };
  const probe = await probeEngine(config, { env: ctx.env, signal, timeoutMs: ctx.timeoutMs });
  throwIfAborted();
  if (!probe.ok) failStart(ctx.lifecycle, { ...probe.failure, logTail: probe.failure.logTail.map(ctx.redactLine) });
  const engineVersion = probe.version;
  const shown = engineVersion === 'unknown' ? '(version unknown)' : engineVersion;
  emit({ type: 'message', severity: 'info', text: `${displayName} ${shown} found (${probe.where})` });
  const needs = adapter.helpRequires?.(config) ?? [];
  const helpModule = adapter.probe.type === 'python' ? adapter.probe.helpModule : undefined;
  const python = probeCommand(config);
  if ((config.quantization || needs.length > 0) && helpModule && python) {
    const help = await readEngineHelp(python, helpModule, {
      env: ctx.env,
      signal,
      timeoutMs: ctx.timeoutMs,
      run: runCapture,
    });
    throwIfAborted();
    const choices = help === undefined ? undefined : parseQuantizationChoices(help);
    if (config.quantization && choices && !choices.includes(config.quantization)) {
      throw new ServerConfigError(
        `--quantization '${config.quantization}' is not supported by ${displayName} ${engineVersion}; valid: ${choices.join(', ')}`,
      );
    }
    const missing = help === undefined ? undefined : needs.find((n) => !help.includes(n.flag));
    if (missing)
      throw new ServerConfigError(
        `${displayName} ${engineVersion} has no ${missing.flag} (${missing.why}): upgrade it (${adapter.description.install} -U)`,
      );
    if (config.quantization && !choices) {
      emit({
        type: 'message',
        severity: 'info',
        text: `could not read the quantization methods from ${displayName} --help; passing --quantization ${config.quantization} as is`,
      });
    }
  }
  return engineVersion;
}
