import { afterEach, describe, expect, it } from 'vitest';
import { createServerManager, type ServerManager } from '../../../src/core/servers/manager.js';
import { ServerConfigError } from '../../../src/core/servers/server-errors.js';
import { alivePids, fakeConfig, launchedPids, makeRun, readRecord } from './helpers.js';

const managers: ServerManager[] = [];
function newManager(): ServerManager {
  const m = createServerManager({ pollMs: 50 });
  managers.push(m);
  return m;
}
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stopAll()));
});

describe('a diffusion model on vLLM (fake python)', () => {
  it("launches with the DiffusionConfig and generation-config flags the installed vLLM's --help lists", async () => {
    const { runDir, recordFile } = await makeRun();
    const server = await newManager().start(
      fakeConfig('vllm', recordFile, 'ok', { diffusion: { blockSize: 32, threshold: 0.9 } }),
      { runDir },
    );
    const argv = readRecord(recordFile).find((e) => e.kind === 'engine')?.argv ?? [];
    expect(JSON.parse(argv[argv.indexOf('--diffusion-config') + 1] as string)).toEqual({ canvas_length: 32 });
    expect(JSON.parse(argv[argv.indexOf('--override-generation-config') + 1] as string)).toEqual({
      confidence_threshold: 0.9,
    });
    await server.stop();
    expect(alivePids(launchedPids(recordFile))).toEqual([]);
  });

  it('refuses in one line, before launching, when the installed vLLM has no --diffusion-config', async () => {
    const { runDir, recordFile } = await makeRun();
    const error = await newManager()
      .start(fakeConfig('vllm', recordFile, 'ok', { diffusion: {}, fakeEnv: { FAKE_VLLM_OLD: '1' } }), { runDir })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerConfigError);
    expect((error as Error).message).toMatch(
      /^vLLM 0\.10\.1 has no --diffusion-config .*upgrade it \(pip install vllm -U\)$/,
    );
    expect(readRecord(recordFile).filter((e) => e.kind === 'engine')).toEqual([]);
  });
});
