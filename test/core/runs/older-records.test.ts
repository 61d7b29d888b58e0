import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { benchConfigFromFlags } from '../../../src/cli/run-options.js';
import { recordedConfig } from '../../../src/cli/run-from.js';
import { renderComparison } from '../../../src/core/report/compare/index.js';
import { loadRunFolder } from '../../../src/core/report/load-run-folder.js';
import { EXPORTERS, renderExport } from '../../../src/core/report/registry.js';

/**
 * run.json files as servebench 0.1 wrote them, one per engine (its flat server section: every engine's keys,
 * `python` and `simArgs` defaults included). Records of earlier versions must keep opening, reporting, comparing
 * and re-running as they are.
 */
const root = resolve(import.meta.dirname, '..', '..', 'fixtures', 'runs-v0.1');
const OLDER = ['vllm', 'sglang', 'llamacpp', 'command', 'sim'] as const;
const dir = (name: string): string => join(root, name);
const TEXT = EXPORTERS.filter((e) => !e.binary);

describe('run.json written by servebench 0.1', () => {
  it.each(OLDER)('%s: opens and renders every text format', async (name) => {
    const folder = await loadRunFolder(dir(name));
    expect(folder.record.config.server.engine).toBe(name);
    for (const exporter of TEXT) {
      const out = await renderExport(exporter, folder);
      expect((out as string).length, exporter.format).toBeGreaterThan(100);
    }
  });

  it('compares with each other', async () => {
    const out = await renderComparison(OLDER.map(dir), 'md', { seed: 1 });
    expect(out.series).toBeGreaterThanOrEqual(OLDER.length);
    expect(out.text).toMatch(/^# servebench compare: vllm vs /);
  });

  it.each(OLDER)('%s: re-runs with --from, every recorded setting kept and nothing called unknown', async (name) => {
    const from = await recordedConfig(dir(name), {}, {});
    expect(from.notices.join('\n')).not.toMatch(/unknown/);
    const config = benchConfigFromFlags({}, {}, from.base);
    const recorded = JSON.parse(await readFile(join(dir(name), 'run.json'), 'utf8')).config.server;
    expect(config.server.engine).toBe(name);
    expect(config.server.model).toBe(recorded.model);
  });

  it('keeps the settings of each engine: vLLM tp and sweep, llama.cpp binary and slots, the command line', async () => {
    const again = async (name: string) => benchConfigFromFlags({}, {}, (await recordedConfig(dir(name), {}, {})).base);
    const vllm = await again('vllm');
    expect(vllm.server).toMatchObject({ tensorParallel: 2, gpuMemoryFraction: 0.85, prefixCaching: false });
    expect(vllm.server.extraArgs).toEqual(['--enforce-eager']);
    expect(vllm.serverVariants).toEqual([{ maxSeqs: 64 }, { maxSeqs: 128 }]);
    const llama = await again('llamacpp');
    expect(llama.server).toMatchObject({ llamaServer: '/opt/llama/llama-server', gpuLayers: 99, maxSeqs: 4 });
    const command = await again('command');
    expect(command.server).toMatchObject({ healthPath: '/ready' });
    expect(command.server.command?.[0]).toBe('text-generation-launcher');
    const sglang = await again('sglang');
    expect(sglang.server.diffusion).toMatchObject({ blockSize: 32, threshold: 0.9 });
    expect(sglang.server.python).toBe('/venv/bin/python');
  });

  it("gives the simulator's recorded extra arguments back as its extra arguments", async () => {
    const sim = benchConfigFromFlags({}, {}, (await recordedConfig(dir('sim'), {}, {})).base);
    const args = [...(sim.server.extraArgs ?? []), ...((sim.server as { simArgs?: string[] }).simArgs ?? [])];
    expect(args).toEqual(['--fault', 'slow-start=100']);
  });
});
