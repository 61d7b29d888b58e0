import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer } from 'vitest/node';
import type { TestSpecification } from 'vitest/node';

/**
 * What a test file does that takes seconds of real time: it starts a process (the CLI, an engine, Slurm), a browser,
 * or a server that streams in real time. The one fact both the run order and test:quick read.
 */
const SLOW_FILE =
  /child_process|execa|run-cli|runCli|sim-process|chromium|playwright|worker_threads|\.mjs['`]|process\.execPath|servebench\.js|startSim|startLlamaCppLike|startFakeOpenAi|FAKE_NVIDIA_SMI|findCliScript|createServerManager/;

/** True when the file's source shows it starts something that runs in real time (SLOW_FILE). */
export function isSlowFile(path: string): boolean {
  return SLOW_FILE.test(readFileSync(path, 'utf8'));
}

/**
 * Runs the files that wait on real time first, so that the longest ones (a two-minute demo, a proxy matrix) do not
 * start last and hold one worker alone at the end; with vitest's own record of earlier runs, its order (the longest
 * first) stands.
 */
export class SpawnsFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const known = files.every((f) =>
      this.ctx.cache.getFileTestResults(`${f.project.name}:${relative(this.ctx.config.root, f.moduleId)}`),
    );
    if (known) return super.sort(files);
    const sized = await super.sort(files);
    const slow = new Set(sized.filter((f) => isSlowFile(f.moduleId)));
    return [...sized.filter((f) => slow.has(f)), ...sized.filter((f) => !slow.has(f))];
  }
}
