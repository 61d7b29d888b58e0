import { basename } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** Prints the fault matrix's tally: cases handled (passed) and not, per area (one test file an area). */
export class FaultTallyReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    let handled = 0;
    let total = 0;
    const rows: string[] = [];
    for (const m of modules) {
      let ok = 0;
      let n = 0;
      const missed: string[] = [];
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === 'skipped' || state === 'pending') continue;
        n++;
        if (state === 'passed') ok++;
        else missed.push(t.name);
      }
      handled += ok;
      total += n;
      rows.push(`  ${basename(m.moduleId, '.test.ts').padEnd(14)} ${ok}/${n} handled`);
      for (const name of missed) rows.push(`    not handled: ${name}`);
    }
    console.log(`\nfault matrix: ${handled} of ${total} cases handled`);
    for (const row of rows) console.log(row);
  }
}

// eslint-disable-next-line no-restricted-syntax -- vitest loads a reporter file's default export
export default FaultTallyReporter;
