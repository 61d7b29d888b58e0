import { describe, expect, it } from 'vitest';
import { executedSettings } from '../../../src/core/runs/recorded-commands.js';
import { FIELDS, fieldByFlag, isServerField, type FieldDescriptor } from '../../../src/shared/fields.js';

// A value no declared setting has as its default, of the shape the field holds.
function sample(f: FieldDescriptor): unknown {
  if (f.type === 'command' || f.type === 'args') return ['/opt/x', '--flag'];
  if (f.type === 'env') return { LD_PRELOAD: '/tmp/x.so' };
  return '/opt/x';
}

describe('the recorded settings run --from asks about', () => {
  it('lists what runs and what is sent, each in its place: command lines, programs, arguments, environment, files', () => {
    const config = {
      server: {
        engine: 'llamacpp',
        llamaServer: '/opt/llama-server',
        extraArgs: ['--jinja'],
        env: { PATH: '/opt/bin', LD_PRELOAD: '/x.so' },
        model: 'm.gguf',
      },
      serverVariants: [{ engine: 'command', command: ['srv', '--port', '{port}'], python: '/venv/bin/python' }],
      nvidiaSmi: '/opt/smi',
      prompts: 'p.jsonl',
      trace: 't.jsonl',
      rounds: 3,
    };
    expect(executedSettings(config)).toEqual([
      { setting: 'server.llamaServer', value: '/opt/llama-server' },
      { setting: 'server.extraArgs', value: '--jinja' },
      { setting: 'server.env.LD_PRELOAD', value: '/x.so' },
      { setting: 'server.env.PATH', value: '/opt/bin' },
      { setting: 'serverVariants[0].command', value: "srv --port '{port}'" },
      { setting: 'serverVariants[0].python', value: '/venv/bin/python' },
      { setting: 'nvidiaSmi', value: '/opt/smi' },
      { setting: 'prompts', value: 'p.jsonl' },
      { setting: 'trace', value: 't.jsonl' },
    ]);
  });

  it('a default asks nothing: a fresh run uses it anyway', () => {
    const config = { server: { engine: 'vllm', python: 'python3', extraArgs: [], env: {} } };
    expect(executedSettings(config)).toEqual([]);
  });

  it("a record of servebench 0.1 reads in today's shape: the simulator's simArgs are its extraArgs", () => {
    const config = { server: { engine: 'sim' }, serverVariants: [{ engine: 'sim', simArgs: ['--truth', '/tmp/t'] }] };
    expect(executedSettings(config)).toEqual([{ setting: 'serverVariants[0].extraArgs', value: '--truth /tmp/t' }]);
  });

  it('every setting declared with `trust` is asked about, and no other', () => {
    const trusted = FIELDS.filter((f) => f.trust !== undefined);
    expect(trusted.map((f) => f.flag).sort()).toEqual(
      ['cmd', 'env', 'llama-server', 'nvidia-smi', 'prompts', 'python', 'server-arg', 'trace'].sort(),
    );
    for (const f of FIELDS.filter((x) => x.path.split('.').length === (isServerField(x) ? 2 : 1))) {
      const key = f.path.split('.').at(-1) as string;
      const server = { engine: f.engines?.[0] ?? 'vllm', ...(isServerField(f) ? { [key]: sample(f) } : {}) };
      const config = { server, ...(isServerField(f) ? {} : { [key]: sample(f) }) };
      const asked = executedSettings(config).map((s) => s.setting.replace(/\.env\..*/, '.env'));
      expect(asked, f.flag).toEqual(f.trust ? [f.path] : []);
    }
  });

  it('a setting marked in its declaration is asked about without another edit', () => {
    const health = fieldByFlag('health') as FieldDescriptor;
    const config = { server: { engine: 'command', command: ['srv'], healthPath: '/ready' } };
    expect(executedSettings(config).map((s) => s.setting)).toEqual(['server.command']);
    const marked = FIELDS.map((f) => (f === health ? { ...f, trust: 'program' as const } : f));
    expect(executedSettings(config, marked)).toEqual([
      { setting: 'server.command', value: 'srv' },
      { setting: 'server.healthPath', value: '/ready' },
    ]);
  });
});
