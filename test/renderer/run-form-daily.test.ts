import { describe, expect, it } from 'vitest';
import { buildConfig, switchEngine } from '../../src/renderer/lib/run-form.js';
import { BUNDLED_SIM_PROFILES } from '../../src/shared/sim-profiles.js';
import { listProfiles } from '../../src/core/sim/profile.js';
import { formOf } from './form-of.js';

describe('the new-run form across engines', () => {
  it("does not carry one engine's model, URL or profile into another that would take them wrongly", () => {
    const sim = formOf({ engine: 'sim', model: 'servebench/sim-llama-8b', 'sim-profile': 'power-capped' });
    const vllm = switchEngine(sim, 'vllm');
    expect(vllm.engine).toBe('vllm');
    expect(vllm.values.model).toBe('');
    expect(vllm.values['sim-profile']).toBe('');
    // Engines that name models alike keep it.
    const sglang = switchEngine(formOf({ engine: 'vllm', model: 'org/model' }), 'sglang');
    expect(sglang.values.model).toBe('org/model');
    const attach = formOf({ engine: 'attach', url: 'http://127.0.0.1:8000' });
    expect(switchEngine(attach, 'sim').values.url).toBe('');
    // A preset belongs to its engine.
    expect(switchEngine(formOf({ engine: 'vllm', preset: 'p' }), 'sim').preset).toBe('');
  });

  it('refuses Start when input + output cannot fit the context the form gives, naming the fields', () => {
    const built = buildConfig(
      formOf({ engine: 'sim', 'max-model-len': '1000', 'input-len': '900', 'output-len': '200', concurrency: '1' }),
    );
    expect(built.ok).toBe(false);
    if (built.ok) return;
    expect(built.field).toBe('output-len');
    expect(built.error).toMatch(/^Input tokens \+ Output tokens \(1100\) is over Max model length \(1000\)/);
    expect(built.error).not.toMatch(/--/);
    expect(
      buildConfig(formOf({ engine: 'sim', 'max-model-len': '1100', 'input-len': '900', 'output-len': '200' })).ok,
    ).toBe(true);
  });

  it("offers the simulator's bundled profiles, the same as its folder holds", () => {
    expect([...BUNDLED_SIM_PROFILES].sort()).toEqual([...listProfiles()].sort());
  });
});
