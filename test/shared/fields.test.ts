import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  BENCH_OPTIONS_HELP,
  SERVER_KEYS,
  TOP_KEYS,
  VARY_KEYS,
  benchConfigFromFlags,
  parseVary,
  readConfigFile,
  runOptions,
} from '../../src/cli/run-options.js';
import { SERVER_OPTIONS_HELP } from '../../src/cli/server-options.js';
import { BenchConfigSchema } from '../../src/shared/config.js';
import { ENGINE_KINDS, type EngineKind } from '../../src/shared/engines.js';
import { SERVER_KEYS as ALL_SERVER_KEYS } from '../../src/shared/server-schema.js';
import {
  FIELDS,
  SWEEPABLE_FIELDS,
  fieldApplies,
  inAppWords,
  isServerField,
  type FieldDescriptor,
} from '../../src/shared/fields.js';
import { getPath, parseFieldText, plainNumber } from '../../src/shared/field-values.js';
import { ENGINE_PICKER, FORM_FIELDS, WORKLOADS, buildConfig, defaultForm } from '../../src/renderer/lib/run-form.js';

const ALL: readonly FieldDescriptor[] = FIELDS;
const dir = mkdtempSync(join(tmpdir(), 'sb-fields-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A value each field takes, as its flag's text (or YAML value where the type has no text form). */
function sample(f: FieldDescriptor): unknown {
  switch (f.type) {
    case 'int':
      return f.flag === 'port' ? '8000' : '2';
    case 'number':
    case 'seconds':
      // A fraction takes 0.5 (its own schema says which).
      return parseFieldText(f, '2').ok ? '2' : '0.5';
    case 'int-list':
    case 'number-list':
      return '1,2';
    case 'switch':
      return true;
    case 'duration':
      return '90s';
    case 'choice':
      return f.choices?.[0];
    case 'engine':
      return 'vllm';
    case 'text':
      if (f.flag === 'dcgm-url') return 'http://127.0.0.1:9400/metrics,http://127.0.0.2:9400/metrics';
      if (f.flag === 'url') return 'http://h:1,http://h:2';
      if (f.flag === 'precision') return '5%';
      if (f.flag === 'response-format') return 'choice=yes,no';
      return f.path === 'server.healthPath' ? '/health' : f.flag === 'slo' ? 'ttft_p95=500' : 'x';
    case 'url':
      return 'http://127.0.0.1:8000';
    case 'command':
      return 'srv --port {port}';
    case 'args':
      return ['--trust-remote-code'];
    case 'env':
      return { CUDA_VISIBLE_DEVICES: '0' };
    default:
      return f.path === 'server.healthPath' ? '/health' : 'x';
  }
}

function yaml(data: unknown, name: string): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, stringify(data));
  return file;
}

const engineFor = (f: FieldDescriptor): EngineKind => ENGINE_KINDS.find((k) => fieldApplies(f, k)) as EngineKind;

describe('the field table', () => {
  it('gives every field a run flag, a help entry and a YAML key (config name and flag name)', () => {
    const help = `${BENCH_OPTIONS_HELP}\n${SERVER_OPTIONS_HELP}`;
    for (const f of ALL) {
      expect(Object.keys(runOptions), f.flag).toContain(f.flag);
      expect(help, f.flag).toMatch(new RegExp(`--${f.flag}\\b`));
      if (f.off) {
        expect(Object.keys(runOptions), f.flag).toContain(f.off);
        expect(help, f.flag).toContain(`--${f.off}`);
      }
      const server = isServerField(f);
      const key = server ? (f.path.split('.')[1] as string) : (f.path.split('.')[0] as string);
      expect(server ? SERVER_KEYS : TOP_KEYS, f.flag).toContain(key);
      // Flag-style key: the value is read like the flag's and lands at the field's place.
      const byFlag = readConfigFile(
        yaml(server ? { server: { [f.flag]: sample(f) } } : { [f.flag]: sample(f) }, f.flag),
      );
      expect(getPath(byFlag, f.path), f.flag).toBeDefined();
    }
  });

  it('covers every key of the config schemas, and no other', () => {
    expect([...TOP_KEYS].sort()).toEqual(Object.keys(BenchConfigSchema.shape).concat('url').sort());
    expect([...SERVER_KEYS].sort()).toEqual([...ALL_SERVER_KEYS].sort());
  });

  it('makes the --vary keys exactly the sweepable fields, each value read like its flag', () => {
    expect([...VARY_KEYS]).toEqual(ALL.filter((f) => f.sweep).map((f) => f.flag));
    for (const f of SWEEPABLE_FIELDS) {
      const [variant] = parseVary([`${f.flag}=${String(sample(f))}`]) ?? [];
      expect(getPath(variant, f.path.slice('server.'.length)), f.flag).toBeDefined();
    }
    expect(() => parseVary(['tp=1e3'])).toThrow(/^--vary tp must be a positive integer \(got '1e3'\)/);
    expect(() => parseVary(['gpu-memory=0x1'])).toThrow(/must be a number in \(0, 1\]/);
  });

  it("gives every run flag a control in the app's form, which sends it to its place", () => {
    const formFlags = FORM_FIELDS.map((f) => f.flag);
    for (const f of ALL) {
      // The runs folder is an app setting of its own (Settings), not a field of one run.
      if (f.ui === 'none') {
        expect(f.appSetsIt, f.flag).toBeTruthy();
        continue;
      }
      if (f.ui === 'engine') {
        expect(ENGINE_PICKER.map((e) => e.id)).toEqual([...ENGINE_KINDS]);
        continue;
      }
      const engine = engineFor(f);
      const base = defaultForm();
      // Requests of 1 + 1 tokens fit any context a field may give (Start refuses a request longer than it).
      const values = {
        ...base.values,
        model: 'org/m',
        url: 'http://h:1',
        cmd: 'srv',
        'input-len': '1',
        'output-len': '1',
      };
      const form = { ...base, engine, diffusion: true, values };
      if (f.ui === 'env') {
        const built = buildConfig({ ...form, env: [{ name: 'HF_TOKEN', value: 'hf_x' }] });
        expect(built.ok && getPath(built.config, f.path), f.flag).toEqual({ HF_TOKEN: 'hf_x' });
        continue;
      }
      expect(formFlags, f.flag).toContain(f.flag);
      const textOf = (d: FieldDescriptor): string =>
        d.ui === 'toggle' ? 'on' : d.ui === 'percent' ? '50' : Array.isArray(sample(d)) ? '--x' : String(sample(d));
      // A workload's field is sent only when its workload is chosen, with the fields that workload cannot go without.
      const mode = WORKLOADS.find((w) => w.fields.includes(f.flag));
      const needs = Object.fromEntries(
        (mode?.required ?? []).map((n) => [n, textOf(ALL.find((d) => d.flag === n) as FieldDescriptor)]),
      );
      const built = buildConfig({
        ...form,
        ...(mode ? { workload: mode.id } : {}),
        values: { ...values, ...needs, [f.flag]: textOf(f) },
      });
      expect(built.ok, `${f.flag}: ${built.ok ? '' : built.error}`).toBe(true);
      expect(built.ok && getPath(built.config, f.path), f.flag).toBeDefined();
    }
  });

  it('has one number parser: 1e3, 0x10, Infinity and signs are refused in flags, sweeps and the form', () => {
    for (const text of ['1e3', '0x10', 'Infinity', '-4', '1_000']) {
      expect(plainNumber(text, true), text).toBeNaN();
      expect(() => benchConfigFromFlags({ rounds: text }, {}), text).toThrow(/--rounds must be/);
      const form = defaultForm();
      expect(buildConfig({ ...form, values: { ...form.values, rounds: text } }), text).toMatchObject({
        ok: false,
        field: 'rounds',
      });
    }
    expect(plainNumber('16', true)).toBe(16);
    expect(plainNumber('0.5', false)).toBe(0.5);
    const tp = ALL.find((f) => f.flag === 'tp') as FieldDescriptor;
    expect(parseFieldText(tp, '2')).toEqual({ ok: true, value: 2 });
  });

  it('joins a list flag given once per item, as the same list given comma-separated', () => {
    const args = ['--dcgm-url', 'http://a:9400/metrics', '--dcgm-url', 'http://b:9400/metrics'];
    const { values } = parseArgs({ args, options: runOptions, strict: true, allowPositionals: true });
    const joined = benchConfigFromFlags(values, {});
    expect(joined.dcgmUrl).toBe('http://a:9400/metrics,http://b:9400/metrics');
    const once = benchConfigFromFlags({ 'dcgm-url': 'http://a:9400/metrics,http://b:9400/metrics' }, {});
    expect(once.dcgmUrl).toBe(joined.dcgmUrl);
    expect(() => benchConfigFromFlags({ 'dcgm-url': ['http://a:9400/metrics', ' '] }, {})).toThrow(/--dcgm-url/);
  });
});

describe('YAML config keys', () => {
  it('names a YAML syntax error in one line that ends with its place, not a dangling colon', () => {
    const path = join(dir, 'broken.yaml');
    writeFileSync(path, 'concurrency: [1\n');
    expect(() => readConfigFile(path)).toThrow(/^--config .*broken\.yaml is not valid YAML: .* at line 2, column 1$/);
  });

  it('refuses an unknown key with the nearest name, and a server key at the top level with where it goes', () => {
    expect(() => readConfigFile(yaml({ concurency: [1] }, 'typo'))).toThrow(
      /unknown field 'concurency' \(did you mean 'concurrency'\?\)/,
    );
    expect(() => readConfigFile(yaml({ server: { maxSeq: 4 } }, 'typo2'))).toThrow(
      /unknown field 'server.maxSeq' \(did you mean 'maxSeqs'\?\)/,
    );
    expect(() => readConfigFile(yaml({ tp: 2 }, 'top'))).toThrow(
      /unknown field 'tp' \(a server setting: put it under server:\)/,
    );
  });

  it('reads flag-style keys like their flags: seconds, fractions, switches, diffusion', () => {
    const c = benchConfigFromFlags(
      {
        config: yaml(
          {
            timeout: 30,
            'no-unique-prefix': true,
            server: { engine: 'vllm', model: 'm', 'gpu-memory': 0.8, threshold: 0.9, 'no-prefix-caching': true },
          },
          'flags',
        ),
      },
      {},
    );
    expect(c.timeoutMs).toBe(30_000);
    expect(c.uniquePrefix).toBe(false);
    expect(c.server).toMatchObject({ gpuMemoryFraction: 0.8, prefixCaching: false, diffusion: { threshold: 0.9 } });
    expect(() => readConfigFile(yaml({ server: { tp: '1e3' } }, 'bad'))).toThrow(/tp must be a positive integer/);
  });
});

describe('messages in the app', () => {
  it('name each setting by the label its form shows, where the command line names its flag', () => {
    expect(inAppWords('vLLM needs a model: pass --model (a hub id)')).toBe(
      'vLLM needs a model: fill in Model (a hub id)',
    );
    expect(inAppWords('or pass --python PATH to the interpreter')).toBe('or fill in Python to the interpreter');
    expect(inAppWords('lower --max-model-len to at most 8192 or raise --gpu-memory')).toBe(
      'lower Max model length to at most 8192 or raise GPU memory fraction',
    );
    // Flags that are no setting of the form stay as they are.
    expect(inAppWords('see --help, or --no-such-flag')).toBe('see --help, or --no-such-flag');
    expect(inAppWords('--no-prefix-caching')).toBe('Prefix caching');
  });
});
