import { z } from 'zod';
import { MODEL_SETTINGS, LAUNCH_SETTINGS } from '../../../shared/server-settings.js';
import { setting } from '../../../shared/setting.js';
import { splitCommandLine } from '../../../shared/command-line.js';
import { defineEngine, used, usedAll } from './define.js';

export { splitCommandLine };

/** The command engine's own settings: the server's command line and where it says it is ready. */
const COMMAND = {
  command: setting(z.array(z.string()).min(1).optional(), {
    flag: 'cmd',
    label: 'Command',
    metavar: '"LINE"',
    help: 'its command line, split like a shell but never run by one; {port}, {host} and {model} are filled in',
    group: 'server',
    syntax: 'command-line',
    trust: 'command',
    placeholder: 'text-generation-launcher --port {port} --model-id {model}',
    engineBound: true,
  }),
  healthPath: setting(z.string().startsWith('/', 'must be a path such as /health').default('/health'), {
    flag: 'health',
    label: 'Health path',
    metavar: 'PATH',
    help: 'readiness path answering 200 when ready',
    group: 'server',
    condition: false,
  }),
};

/** Any OpenAI-compatible server from an argv: `{port}`, `{host}` and `{model}` are filled in. */
export const commandEngine = defineEngine({
  kind: 'command',
  description: {
    name: 'Command',
    hint: 'any OpenAI-compatible server started from a command line ({port} and {model} are filled in)',
    requiresModel: false,
    modelHint: 'the served model name, filled in for {model}',
    install: 'install the server the command runs',
  },
  settings: {
    ...usedAll(LAUNCH_SETTINGS, 'the launch itself'),
    model: used(MODEL_SETTINGS.model, '{model} in the command line'),
    servedModelName: used(MODEL_SETTINGS.servedModelName, 'the model requests name'),
    command: used(COMMAND.command, 'the argv run'),
    healthPath: used(COMMAND.healthPath, 'polled until it answers 200'),
  },
  required: ['command'],
  anonymous: true,
  noProbeNote: 'servebench runs the command line as given: nothing to look for',
  healthPath: '/health',
  progress: [],
  // Scraped when the server has it; a 404 only leaves engine telemetry unavailable.
  metricsPath: '/metrics',
  failures: [],
  spawnFix: 'check --cmd: its first word must be an executable on PATH or a path to one',
  command(config, ctx, note) {
    const argv = config.command;
    if (!argv || argv.length === 0) throw new Error('--engine command needs --cmd "server command line"');
    const needsModel = argv.some((a) => a.includes('{model}'));
    if (needsModel && !config.model) throw new Error('the command uses {model}: pass --model');
    const fill = (a: string): string =>
      a
        .replaceAll('{port}', String(ctx.port))
        .replaceAll('{host}', ctx.host)
        .replaceAll('{model}', config.model ?? '');
    const [command, ...head] = argv.map(fill) as [string, ...string[]];
    if (!argv.some((a) => a.includes('{port}')))
      note.message(`the command has no {port}: servebench expects the server on port ${ctx.port}`);
    const model = config.servedModelName ?? config.model;
    return { command, head, healthPath: config.healthPath, ...(model ? { model } : {}) };
  },
});
