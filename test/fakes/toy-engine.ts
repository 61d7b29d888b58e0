import { z } from 'zod';
import { ENGINE_SETTINGS as E, LAUNCH_SETTINGS } from '../../src/shared/server-settings.js';
import { setting } from '../../src/shared/setting.js';
import { defineEngine, flag, used, usedAll } from '../../src/core/servers/engines/define.js';

/**
 * A throwaway engine in one file, as a new engine module is written: its description, its settings (one shared,
 * one of its own) with their command line, readiness and metrics. A test adds it to the registry (one line) and
 * finds it in the CLI, YAML, --vary, the app's form and the docs.
 */
export const toyEngine = defineEngine({
  kind: 'toy',
  description: {
    name: 'Toy',
    hint: 'servebench launches toy-serve',
    requiresModel: true,
    modelHint: 'a toy model name',
    install: 'pip install toy-serve',
  },
  settings: {
    ...usedAll(LAUNCH_SETTINGS, 'the launch itself'),
    model: used(LAUNCH_SETTINGS.model, '--model'),
    maxSeqs: flag(E.maxSeqs, '--slots'),
    toyKnob: flag(
      setting(z.number().int().min(1).max(9).optional(), {
        label: 'Toy knob',
        metavar: 'N',
        help: "the toy engine's own knob",
        group: 'server',
        sweep: true,
      }),
      '--knob',
    ),
  },
  healthPath: '/ready',
  progress: [],
  metricsPath: '/metrics',
  metricNames: { running: ['toy:running'] },
  failures: [],
  spawnFix: 'install toy-serve',
  command(_config, ctx, { model }) {
    return { command: 'toy-serve', head: ['--model', model, '--port', String(ctx.port)], model };
  },
});
