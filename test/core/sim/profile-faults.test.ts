import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../../src/core/errors.js';
import {
  applyOverrides,
  BASE_PROFILE,
  denoiseSteps,
  listProfiles,
  loadProfile,
  parseFault,
} from '../../../src/core/sim/index.js';

describe('sim profiles', () => {
  it('loads every bundled profile, including instant and the default', () => {
    const names = listProfiles();
    for (const required of [
      'instant',
      'h200-llama8b-bf16',
      'rtx4080-llama8b-int4',
      'h200-dllm-block',
      'thermal-throttle-demo',
      'power-capped',
    ]) {
      expect(names).toContain(required);
    }
    for (const name of names) {
      const p = loadProfile(name);
      expect(p.name).toBe(name);
      expect(p.description.length).toBeGreaterThan(10);
    }
    expect(loadProfile('instant').instant).toBe(true);
    expect(loadProfile('h200-dllm-block').blockSize).toBe(32);
    // extends: the diffusion profile keeps its base's GPU
    expect(loadProfile('h200-dllm-block').gpuName).toBe('NVIDIA H200');
    expect(loadProfile('rtx4080-llama8b-int4').gpuMemTempOffsetC).toBeNull();
  });

  it('loads a profile file and applies overrides with checks', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sim-profile-'));
    const file = join(dir, 'mine.yaml');
    writeFileSync(
      file,
      'name: mine\ndescription: my own illustrative profile\nparams:\n  max-num-seqs: 4\n  threshold: 0.8\n',
    );
    const p = loadProfile(file);
    expect(p.maxNumSeqs).toBe(4);
    expect(p.threshold).toBe(0.8);
    expect(applyOverrides(p, { 'max-num-seqs': '9', 'prefix-caching': 'false' }, 'flags')).toMatchObject({
      maxNumSeqs: 9,
      prefixCaching: false,
    });
    expect(() => applyOverrides(p, { 'max-num-seqs': '0' }, 'flags')).toThrow(UserError);
    expect(() => applyOverrides(p, { threshold: '1.5' }, 'flags')).toThrow(/threshold/);
    expect(() => applyOverrides(p, { 'no-such-thing': 1 }, 'flags')).toThrow(/unknown parameter/);
    expect(() => loadProfile('no-such-profile')).toThrow(/unknown sim profile 'no-such-profile'; use one of/);
    expect(() => loadProfile(join(dir, 'missing.yaml'))).toThrow(UserError);
    writeFileSync(file, 'params:\n  kv-cache-tokens: 100\n');
    expect(() => loadProfile(file)).toThrow(/kv-cache-tokens/);
  });

  it('has a denoising curve that falls with the threshold', () => {
    const at = (t: number): number => denoiseSteps(32, t, BASE_PROFILE.denoiseExponent);
    expect(at(1)).toBe(32);
    expect(at(0.95)).toBe(18);
    expect(at(0.9)).toBe(10);
    expect(at(0.5)).toBe(1);
    for (let t = 0.5; t < 1; t += 0.05) expect(at(t)).toBeLessThanOrEqual(at(t + 0.05));
    expect(denoiseSteps(1, 0.9, 12)).toBe(1);
  });
});

describe('parseFault', () => {
  it('parses every documented spec', () => {
    expect(parseFault('crash-after=3')).toEqual({ kind: 'crash-after', requests: 3 });
    expect(parseFault('error-rate=0.1')).toEqual({ kind: 'error-rate', p: 0.1 });
    expect(parseFault('midstream-error-rate=1')).toEqual({ kind: 'midstream-error-rate', p: 1 });
    expect(parseFault('malformed-rate=0.5')).toEqual({ kind: 'malformed-rate', p: 0.5 });
    expect(parseFault('buffered')).toEqual({ kind: 'buffered' });
    expect(parseFault('stall-ms=500')).toEqual({ kind: 'stall-ms', ms: 500 });
    expect(parseFault('slow-start=2000')).toEqual({ kind: 'slow-start', ms: 2000 });
    expect(parseFault('oom-on-start')).toEqual({ kind: 'oom-on-start' });
    expect(parseFault('close-after-stream')).toEqual({ kind: 'close-after-stream' });
  });

  it('rejects bad specs with a UserError naming the fix', () => {
    expect(() => parseFault('error-rate=2')).toThrow(/between 0 and 1, e.g. --fault error-rate=0.1/);
    expect(() => parseFault('crash-after')).toThrow(/whole number/);
    expect(() => parseFault('buffered=1')).toThrow(/takes no value/);
    expect(() => parseFault('explode')).toThrow(/unknown fault 'explode'; use one of/);
    expect(() => parseFault('stall-ms=-1')).toThrow(UserError);
  });
});
