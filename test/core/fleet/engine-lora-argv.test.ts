import { describe, expect, it } from 'vitest';
import { ServerConfigSchema, type ServerConfig } from '../../../src/shared/config.js';
import { engineFor } from '../../../src/core/servers/engines/index.js';

const cfg = (input: Record<string, unknown>): ServerConfig => ServerConfigSchema.parse(input);
const ctx = { host: '127.0.0.1', port: 8123, runDir: '/runs/r1' };

describe('--lora on each engine command line', () => {
  it('vLLM: --enable-lora, --max-loras the count, --lora-modules name=path', () => {
    const plan = engineFor('vllm').plan(cfg({ engine: 'vllm', model: 'org/m', lora: 'a=/w/a:3,b=/w/b' }), ctx);
    const i = plan.args.indexOf('--enable-lora');
    expect(plan.args.slice(i, i + 6)).toEqual([
      '--enable-lora',
      '--max-loras',
      '2',
      '--lora-modules',
      'a=/w/a',
      'b=/w/b',
    ]);
  });

  it('SGLang: --lora-paths name=path', () => {
    const plan = engineFor('sglang').plan(cfg({ engine: 'sglang', model: 'org/m', lora: 'a=/w/a' }), ctx);
    const i = plan.args.indexOf('--lora-paths');
    expect(plan.args.slice(i, i + 2)).toEqual(['--lora-paths', 'a=/w/a']);
  });

  it('llama.cpp: --lora per adapter, loaded unapplied; requests pick by id', () => {
    const engine = engineFor('llamacpp');
    const plan = engine.plan(cfg({ engine: 'llamacpp', model: 'm.gguf', lora: 'a=/w/a.gguf,b=/w/b.gguf' }), ctx);
    const i = plan.args.indexOf('--lora');
    expect(plan.args.slice(i, i + 5)).toEqual([
      '--lora',
      '/w/a.gguf',
      '--lora',
      '/w/b.gguf',
      '--lora-init-without-apply',
    ]);
    expect(engine.loraBy).toBe('lora-id');
  });

  it('a launched engine refuses an adapter without its path, naming the fix', () => {
    expect(() => engineFor('vllm').plan(cfg({ engine: 'vllm', model: 'org/m', lora: 'a' }), ctx)).toThrow(
      /--lora a=\/path\/to\/adapter/,
    );
  });

  it('the simulator takes names only; an engine without LoRA says it ignores --lora', () => {
    const sim = engineFor('sim').plan(cfg({ engine: 'sim', lora: 'a,b' }), {
      ...ctx,
      cliScript: () => 'cli.js',
      nodePath: 'node',
    });
    expect(sim.args.join(' ')).toContain('--lora-modules a --lora-modules b');
    const trt = engineFor('trtllm').plan(cfg({ engine: 'trtllm', model: 'org/m', lora: 'a=/w' }), ctx);
    expect(trt.messages.some((m) => m.includes('ignores --lora'))).toBe(true);
  });
});
