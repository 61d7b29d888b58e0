import type { Reporter, TestModule, TestSpecification } from 'vitest/node';

/** Files the end-of-run table names: where the time went. */
const SLOWEST = 12;

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** A finished file's tests by state. */
function tally(m: TestModule): { passed: number; failed: number; skipped: number } {
  const t = { passed: 0, failed: 0, skipped: 0 };
  for (const test of m.children.allTests()) {
    const state = test.result().state;
    if (state === 'passed') t.passed++;
    else if (state === 'failed') t.failed++;
    else t.skipped++;
  }
  return t;
}

/**
 * One line per finished test file (its place in the run, its verdict, its tests and how long it took), then the
 * slowest files: where a run is and where its time goes, without a line per test. Pair it with the `agent` reporter,
 * which prints only failures and the totals.
 */
export class ProgressReporter implements Reporter {
  private total = 0;
  private done = 0;
  private startMs = 0;
  private readonly times: Array<{ file: string; ms: number }> = [];

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    this.total = specifications.length;
    this.done = 0;
    this.startMs = Date.now();
    this.times.length = 0;
  }

  onTestModuleEnd(m: TestModule): void {
    this.done++;
    const t = tally(m);
    const d = m.diagnostic();
    // A file's own time: importing it and its tests and hooks (a worker may wait before it starts).
    const ms = d.collectDuration + d.duration;
    this.times.push({ file: m.relativeModuleId, ms });
    const verdict = t.failed > 0 || m.state() === 'failed' ? 'FAIL' : 'ok  ';
    const counts = `${t.passed} passed${t.failed ? `, ${t.failed} failed` : ''}${t.skipped ? `, ${t.skipped} skipped` : ''}`;
    const width = String(this.total).length;
    process.stdout.write(
      `[${String(this.done).padStart(width)}/${this.total}] ${verdict} ${m.relativeModuleId}  ${counts}  ` +
        `${seconds(ms)}  (${seconds(Date.now() - this.startMs)} in)\n`,
    );
  }

  onTestRunEnd(): void {
    if (this.times.length < 2) return;
    const slow = [...this.times].sort((a, b) => b.ms - a.ms).slice(0, SLOWEST);
    const sum = this.times.reduce((s, x) => s + x.ms, 0);
    const lines = slow.map((x) => `  ${seconds(x.ms).padStart(8)}  ${x.file}`);
    process.stdout.write(
      `\nslowest files (${seconds(sum)} of file time over ${seconds(Date.now() - this.startMs)} wall):\n` +
        `${lines.join('\n')}\n`,
    );
  }
}

// eslint-disable-next-line no-restricted-syntax -- vitest loads a reporter file's default export
export default ProgressReporter;
