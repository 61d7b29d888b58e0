import { describeEngine } from '../../../shared/engines.js';
import type { EngineModule } from './types.js';
import { splitCommandLine } from '../../../shared/command-line.js';

export { splitCommandLine };

/** Any OpenAI-compatible server from an argv: `{port}`, `{host}` and `{model}` are filled in. */
export const commandEngine: EngineModule = {
  kind: 'command',
  description: describeEngine('command'),
  noProbeNote: 'servebench runs the command line as given: nothing to look for',
  healthPath: '/health',
  progress: [],
  // Scraped when the server has it; a 404 only leaves engine telemetry unavailable.
  metricsPath: '/metrics',
  failures: [],
  spawnFix: 'check --cmd: its first word must be an executable on PATH or a path to one',
  plan(config, ctx) {
    const argv = config.command;
    if (!argv || argv.length === 0) throw new Error('--engine command needs --cmd "server command line"');
    const needsModel = argv.some((a) => a.includes('{model}'));
    if (needsModel && !config.model) throw new Error('the command uses {model}: pass --model');
    const fill = (a: string): string =>
      a
        .replaceAll('{port}', String(ctx.port))
        .replaceAll('{host}', ctx.host)
        .replaceAll('{model}', config.model ?? '');
    const [command, ...args] = argv.map(fill) as [string, ...string[]];
    const messages = argv.some((a) => a.includes('{port}'))
      ? []
      : [`the command has no {port}: servebench expects the server on port ${ctx.port}`];
    return {
      command,
      args: [...args, ...config.extraArgs],
      files: [],
      messages,
      healthPath: config.healthPath ?? '/health',
      ...(config.servedModelName ? { model: config.servedModelName } : config.model ? { model: config.model } : {}),
    };
  },
};
