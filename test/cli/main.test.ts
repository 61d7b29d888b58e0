import { execFileSync, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const cli = new URL('../../bin/servebench.js', import.meta.url).pathname;

describe('servebench CLI entry', () => {
  it('prints help listing the commands', () => {
    const out = execFileSync(process.execPath, [cli, '--help'], { encoding: 'utf8' });
    expect(out).toMatch(/Usage: servebench <command>/);
    expect(out).toMatch(/\brun\b/);
    expect(out).toMatch(/\bsim\b/);
  });

  it('rejects an unknown command with one line and exit code 2', () => {
    const res = spawnSync(process.execPath, [cli, 'frobnicate'], { encoding: 'utf8' });
    expect(res.status).toBe(2);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toMatch(/unknown command 'frobnicate'/);
  });

  it('shows the help, not an error, for a bad flag followed by --help', () => {
    const res = spawnSync(process.execPath, [cli, '--bogus', '--help'], { encoding: 'utf8' });
    expect(res.status).toBe(0);
    expect(res.stdout).toMatch(/Usage: servebench <command>/);
    const bad = spawnSync(process.execPath, [cli, '--bogus'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
  });

  it.each(['', 'run', 'sim', 'gpu', 'ui', 'report', 'compare'])(
    "'servebench %s --help' fits a terminal of 80 columns",
    (command) => {
      const args = command ? [cli, command, '--help'] : [cli, '--help'];
      const out = execFileSync(process.execPath, args, { encoding: 'utf8' });
      const wide = out.split('\n').filter((line) => line.length > 80);
      expect(wide).toEqual([]);
    },
  );
});
