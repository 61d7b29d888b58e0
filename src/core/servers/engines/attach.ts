import { z } from 'zod';
import { LORA_SETTING, MODEL_SETTINGS } from '../../../shared/server-settings.js';
import { MAX_REPLICAS, replicaUrls } from '../../../shared/replicas.js';
import { setting } from '../../../shared/setting.js';
import { defineEngine, used, usedAll } from './define.js';

const isHttpUrl = (u: string): boolean => z.url({ protocol: /^https?$/ }).safeParse(u).success;

/** The address of a server someone else runs, or of several replicas (comma-separated): giving it chooses this engine. */
const URL_SETTING = setting(
  z
    .string()
    .refine((v) => replicaUrls(v).length > 0 && replicaUrls(v).every(isHttpUrl), {
      error: 'must be an http(s) URL such as http://127.0.0.1:8000, or several replicas comma-separated',
    })
    .refine((v) => replicaUrls(v).length <= MAX_REPLICAS, {
      error: `must name at most ${MAX_REPLICAS} replicas: each is probed and gets a row in every table`,
    })
    .optional(),
  {
    label: 'Server URL',
    metavar: 'URL[,URL]',
    help: 'benchmark a server that is already running (no launch), or several replicas (URL,URL: the client balances them, --balance); without it servebench launches --engine',
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
    lora: used(LORA_SETTING, "each request's model field names its adapter"),
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
