import { z } from 'zod';
import { MODEL_SETTINGS } from '../../../shared/server-settings.js';
import { setting } from '../../../shared/setting.js';
import { defineEngine, used, usedAll } from './define.js';

/** The address of a server someone else runs: giving it chooses this engine. */
const URL_SETTING = setting(
  z.url({ protocol: /^https?$/, error: 'must be an http(s) URL such as http://127.0.0.1:8000' }).optional(),
  {
    label: 'Server URL',
    metavar: 'URL',
    help: 'benchmark a server that is already running (no launch); without it servebench launches --engine',
    group: 'server',
    placeholder: 'http://127.0.0.1:8000',
    // Two addresses may reach one server, one address two: the engine, its version and the model say which.
    condition: false,
    engineBound: true,
  },
);

/** A server someone else runs: nothing to launch; the manager probes /health and /v1/models. */
export const attachEngine = defineEngine({
  kind: 'attach',
  description: {
    name: 'Attach URL',
    hint: 'an OpenAI-compatible server someone else runs',
    requiresModel: false,
    modelHint: 'the served model name (asked from the server when not given)',
    install: 'nothing: servebench connects to a running server',
  },
  settings: {
    url: used(URL_SETTING, 'the server'),
    ...usedAll(MODEL_SETTINGS, 'the attach itself'),
  },
  launches: false,
  chosenBy: 'url',
  required: ['url'],
  anonymous: true,
  noProbeNote: "nothing is launched: servebench connects to the server's URL",
  healthPath: '/health',
  progress: [],
  metricsPath: '/metrics',
  failures: [],
  spawnFix: 'check --url',
  command() {
    throw new Error('attach launches nothing');
  },
});
