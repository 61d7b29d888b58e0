import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { waitGroupGone } from '../../../src/core/servers/process-group.js';
import { alivePids, FAKE_PYTHON, launchedPids, makeRun } from './helpers.js';

// A process that owns a server and then ends without stopping it: the server must not outlive it.
const OWNER = `
import { createServerManager } from ${JSON.stringify(fileURLToPath(new URL('../../../src/core/servers/manager.ts', import.meta.url)))};
const [python, runDir, record, how] = process.argv.slice(2);
const manager = createServerManager({ pollMs: 50, grace: { interruptMs: 5000, terminateMs: 5000, killMs: 5000 } });
const server = await manager.start(
  {
    engine: 'vllm', model: 'm', python, host: '127.0.0.1', port: 0, env: { FAKE_ENGINE_MODE: 'ok', FAKE_ENGINE_RECORD: record },
    extraArgs: [], startTimeoutMs: 60000,
  },
  { runDir },
);
process.stdout.write(JSON.stringify({ pgid: server.info.pid }) + '\\n');
// 'exit': leave without stopping when told to on stdin; 'signal': wait for a signal.
if (how === 'exit') process.stdin.once('data', () => process.exit(0));
else setInterval(() => undefined, 1000);
`;

let ownerScript = '';
beforeAll(async () => {
  const { runDir } = await makeRun();
  const entry = join(runDir, 'owner.ts');
  ownerScript = join(runDir, 'owner.mjs');
  await writeFile(entry, OWNER);
  await build({
    entryPoints: [entry],
    outfile: ownerScript,
    bundle: true,
    platform: 'node',
    format: 'esm',
    logLevel: 'error',
  });
});

async function runOwner(
  how: 'exit' | 'signal',
): Promise<{ pgid: number; pids: number[]; code: number | null; signal: string | null }> {
  const { runDir, recordFile } = await makeRun();
  const child = spawn(process.execPath, [ownerScript, FAKE_PYTHON, runDir, recordFile, how], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const first = await new Promise<string>((resolve) => {
    let buffer = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      buffer += d;
      if (buffer.includes('\n')) resolve(buffer.split('\n')[0] as string);
    });
  });
  const { pgid } = JSON.parse(first) as { pgid: number };
  const pids = launchedPids(recordFile);
  expect(alivePids(pids)).toHaveLength(2);
  if (how === 'signal') child.kill('SIGTERM');
  else child.stdin.write('exit\n');
  const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
    child.once('exit', (c, s) => resolve([c, s])),
  );
  return { pgid, pids, code, signal };
}

describe('nothing outlives its owner', () => {
  it('kills the server group when the owning process exits without stopping it', async () => {
    const { pgid, pids, code } = await runOwner('exit');
    expect(code).toBe(0);
    expect(await waitGroupGone(pgid, 20_000)).toBe(true); // SIGKILL was sent on exit; the kernel finishes it
    expect(alivePids(pids)).toEqual([]);
  });

  it('stops the server group when the owner gets SIGTERM, then dies of the signal', async () => {
    const { pgid, pids, signal } = await runOwner('signal');
    expect(signal).toBe('SIGTERM');
    expect(await waitGroupGone(pgid, 1)).toBe(true); // stopped before the owner re-raised the signal
    expect(alivePids(pids)).toEqual([]);
  });
});
