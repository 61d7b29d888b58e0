import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

// Adding an engine is its module and one registry line: here the registry gets one more line, the test's toy engine.
vi.mock('../../../src/core/servers/engines/registry.js', async () => {
  const actual = await vi.importActual<{ ENGINES: readonly unknown[] }>(
    '../../../src/core/servers/engines/registry.js',
  );
  const { toyEngine } = await import('../../fakes/toy-engine.js');
  return { ENGINES: [...actual.ENGINES, toyEngine] };
});

const { SERVER_OPTIONS_HELP, serverConfigFromFlags } = await import('../../../src/cli/server-options.js');
const { parseVary, readConfigFile, runOptions } = await import('../../../src/cli/run-options.js');
const { ServerConfigSchema } = await import('../../../src/shared/config.js');
const { engineFor } = await import('../../../src/core/servers/engines/index.js');
const { renderEngineTable, renderOptionTable } = await import('../../../src/core/servers/engines/table.js');
const { ENGINE_PICKER, FORM_FIELDS, buildConfig, shows, varyKeys } =
  await import('../../../src/renderer/lib/run-form.js');
const { formOf } = await import('../../renderer/form-of.js');
const { renderCliReference } = await import('../../../src/cli/cli-reference.js');

const dir = mkdtempSync(join(tmpdir(), 'sb-toy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('an engine added as one module and one registry line', () => {
  it('is an --engine choice with its own help section, and its settings are flags', () => {
    expect(SERVER_OPTIONS_HELP).toMatch(/--engine sim\|.*\|toy\n/);
    expect(SERVER_OPTIONS_HELP).toMatch(/\nToy \(--engine toy\):\n {2}--toy-knob N {2,}the toy engine's own knob/);
    expect(Object.keys(runOptions)).toContain('toy-knob');
    const config = serverConfigFromFlags({ engine: 'toy', model: 'm', 'toy-knob': '3', 'max-seqs': '4' });
    expect(config).toMatchObject({ engine: 'toy', toyKnob: 3, maxSeqs: 4 });
    expect(() => serverConfigFromFlags({ engine: 'toy', model: 'm', 'toy-knob': '12' })).toThrow(
      /^--toy-knob must be an integer from 1 to 9 \(got '12'\)/,
    );
    expect(() => serverConfigFromFlags({ engine: 'toy' })).toThrow(/^Toy needs a model: pass --model \(a toy model/);
  });

  it('launches with its own command line, and names what it ignores', () => {
    const plan = engineFor('toy' as never).plan(
      ServerConfigSchema.parse({ engine: 'toy', model: 'm', toyKnob: 2, maxSeqs: 4, tensorParallel: 2 }),
      { host: '127.0.0.1', port: 9, runDir: '/r' },
    );
    expect([plan.command, ...plan.args]).toEqual([
      'toy-serve',
      '--model',
      'm',
      '--port',
      '9',
      '--slots',
      '4',
      '--knob',
      '2',
    ]);
    expect(plan.messages).toEqual(['Toy ignores --tp']);
  });

  it('takes its settings in a YAML config and in --vary', () => {
    const file = join(dir, 'toy.yaml');
    writeFileSync(file, 'server:\n  engine: toy\n  toy-knob: 5\n  toyKnob: 6\n');
    expect(() => readConfigFile(file)).not.toThrow();
    writeFileSync(file, 'server:\n  toyKnb: 5\n');
    expect(() => readConfigFile(file)).toThrow(/unknown field 'server.toyKnb' \(did you mean 'toyKnob'\?\)/);
    expect(parseVary(['toy-knob=1,2'])).toEqual([{ toyKnob: 1 }, { toyKnob: 2 }]);
  });

  it("is in the app's engine picker, and its form shows and sends its own settings", () => {
    expect(ENGINE_PICKER.at(-1)).toEqual({ id: 'toy', name: 'Toy', hint: 'servebench launches toy-serve' });
    const knob = FORM_FIELDS.find((f) => f.flag === 'toy-knob');
    expect(knob && shows({ engine: 'toy' as never, diffusion: false }, knob)).toBe(true);
    expect(knob && shows({ engine: 'vllm', diffusion: false }, knob)).toBe(false);
    expect(varyKeys('toy' as never).map((f) => f.flag)).toEqual(['max-seqs', 'toy-knob']);
    const built = buildConfig(formOf({ engine: 'toy', model: 'm', 'toy-knob': '7' }));
    expect(built.ok && built.config.server).toEqual({ engine: 'toy', model: 'm', toyKnob: 7 });
  });

  it("is in the docs' engine table, option mapping and CLI reference", () => {
    expect(renderEngineTable()).toMatch(/\| `toy` +\| Toy +\|/);
    expect(renderOptionTable()).toMatch(/Toy/);
    expect(renderOptionTable()).toMatch(/`--knob`/);
    expect(renderCliReference()).toMatch(/`--toy-knob N`/);
  });
});
