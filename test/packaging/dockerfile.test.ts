import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

// The image `servebench k8s` runs: built and started where a container engine answers (docker or podman), skipped
// (saying why) where none does.
const root = new URL('../..', import.meta.url).pathname;
const engine = ['docker', 'podman'].find((e) => spawnSync(e, ['info'], { stdio: 'ignore' }).status === 0);

describe.skipIf(!engine)(
  `the Dockerfile${engine ? '' : ' (skipped: no container engine answers here: docker info / podman info)'}`,
  () => {
    it('builds an image whose servebench answers', () => {
      const tag = `servebench-test:${process.pid}`;
      const build = spawnSync(engine!, ['build', '-t', tag, root], { encoding: 'utf8', timeout: 1_800_000 });
      expect(build.status, build.stderr).toBe(0);
      const run = spawnSync(engine!, ['run', '--rm', tag, 'k8s', '--help'], { encoding: 'utf8', timeout: 120_000 });
      spawnSync(engine!, ['rmi', tag], { stdio: 'ignore' });
      expect(run.stdout).toContain('Indexed Job');
    }, 1_900_000);
  },
);
