import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/shared/run-record.js';
import { exitAgrees, unexplainedInRun } from '../fakes/run-checks.js';

const cli = new URL('../../bin/servebench.js', import.meta.url).pathname;
/** The real demo runs 1-2 minutes on an idle 2-core machine; a loaded or slowed one may take several times that. */
const DEMO_MS = 15 * 60_000;

// The first thing a newcomer sees: `servebench run` with no flags must not discredit its own defaults.
describe('the default demo (`servebench run` with no flags)', () => {
  it('passes every check but the SIMULATED notice, at fixed lengths', { timeout: DEMO_MS + 60_000 }, async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'sb-demo-'));
    try {
      const child = spawn(process.execPath, [cli, 'run'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      const timer = setTimeout(() => child.kill('SIGINT'), DEMO_MS);
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      clearTimeout(timer);
      const [dir] = await readdir(join(cwd, 'runs'));
      const record = JSON.parse(await readFile(join(cwd, 'runs', dir!, 'run.json'), 'utf8')) as RunRecord;
      expect(record.status, output).toBe('completed');
      expect(exitAgrees(code, record)).toBe(true);
      expect(record.simulated).toBe(true);
      // The client and round-spread checks measure this machine's load (the simulator and the client share its
      // cores): on a starved one they rightly warn or fail, and a starved client sees stalls and merged reads, which
      // say nothing of the defaults.
      expect(unexplainedInRun(record)).toEqual(['server/simulated']);
      for (const level of record.levels) expect(level.failed).toBe(0);
      expect(new Set(record.levels.map((l) => `${l.inputLen}/${l.outputLen}`)).size).toBe(1);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });
});
