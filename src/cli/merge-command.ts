import { parseArgs } from 'node:util';
import { createMonoClock } from '../core/clock.js';
import { mergeShards } from '../core/distributed/merge-shards.js';
import { UserError } from '../core/errors.js';
import { argsErrorLine } from './args-error.js';
import { formatLevelTable, formatProblems, formatWorkerTable } from './format-table.js';
import { wrapHelp } from './help-text.js';
import { helpLine } from './field-flags.js';
import { createProgressRenderer } from './progress.js';

const MERGE_HELP = `Usage: servebench merge SHARD_DIR... [options]

Builds one run folder from the shard folders of a distributed run (each rank keeps one: RUN/shards/rank-N), as rank 0
does live: every shard's raw records are moved onto rank 0's clock with the offsets it recorded, and each level's
percentiles, throughput and checks are computed over all of them together. For shards gathered from machines without
a shared disk, or a run whose rank 0 could not collect everything. A run folder stands for the shards inside it.

${helpLine('--out DIR', 'where the merged run folder goes (default: beside the run the shards came from)')}
${helpLine('-h, --help', 'this help')}

Exit status: 0 every rank's shard was merged and no check failed, 1 a shard was missing or a check failed, 2 bad usage.`;

/** `servebench merge`: one run folder from shard folders. */
export async function mergeCommand(argv: string[]): Promise<number> {
  let parsed: ReturnType<
    typeof parseArgs<{
      options: { out: { type: 'string' }; help: { type: 'boolean'; short: 'h' } };
      allowPositionals: true;
    }>
  >;
  try {
    parsed = parseArgs({
      args: argv,
      options: { out: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UserError(argsErrorLine(error as Error, 'merge'));
  }
  if (parsed.values.help) {
    console.log(wrapHelp(MERGE_HELP));
    return 0;
  }
  if (parsed.positionals.length === 0)
    throw new UserError('give the shard folders to merge (RUN/shards/rank-N), or the run folder holding them');
  const result = await mergeShards(parsed.positionals, {
    out: parsed.values.out,
    clock: createMonoClock(),
    now: () => new Date(),
    // What a level's summary notes (a sample or sketch of a big level) is said as a live run says it.
    emit: createProgressRenderer(process.stderr, false),
  });
  const { record } = result;
  if (record.levels.length > 0) {
    console.log(formatLevelTable(record));
    const workers = formatWorkerTable(record);
    if (workers) console.log(`\nload generators (offsets to rank 0's clock in ms):\n${workers}`);
    for (const line of formatProblems(record)) console.log(line);
  }
  console.log(`\nmerged run folder: ${result.dir}`);
  if (result.failure) {
    console.error(`servebench merge: ${result.failure}`);
    return 1;
  }
  return record.checks.some((c) => c.status === 'fail') ? 1 : 0;
}
