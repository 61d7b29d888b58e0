import { parseArgs } from 'node:util';
import { ActiveRuns, runBenchmark } from '../core/benchmark.js';
import { defaultBenchmarkDeps } from '../core/default-deps.js';
import { UserError } from '../core/errors.js';
import { argsErrorLine, helpAsked } from './args-error.js';
import { benchSecretValues, redactEvent, redactLine } from '../core/servers/redact.js';
import { capacitySearches } from '../shared/capacity.js';
import { capacityLines, capacityTitle } from '../shared/capacity-format.js';
import { recordedConfig } from './run-from.js';
import { confirmRecorded, recordedToConfirm, terminalIo } from './confirm-recorded.js';
import {
  formatGroupTable,
  formatLevelTable,
  formatPrecision,
  formatProblems,
  formatTtftSplits,
  formatTurnTable,
  formatWorkerTable,
} from './format-table.js';
import { GROUP_TABLES } from '../shared/group-table.js';
import { DISTRIBUTED_OPTIONS_HELP, distributedRequest } from './distributed-options.js';
import { runDistributed } from '../core/distributed/run-distributed.js';
import type { BenchmarkResult } from '../core/benchmark.js';
import type { RunRecord } from '../shared/run-record.js';
import type { DistributedIdentity } from '../core/distributed/environment.js';
import { createProgressRenderer } from './progress.js';
import { BENCH_OPTIONS_HELP, benchConfigFromFlags, runOptions } from './run-options.js';
import { SERVER_OPTIONS_HELP, checkServerAddress } from './server-options.js';
import { wrapHelp } from './help-text.js';
import { STOP_SIGNALS, STOP_WORDS, quietOutput, type StopSignal } from './stop-signals.js';

const RUN_HELP = `Usage: servebench run [options]

Launches a server (or attaches to one with --url), warms it up, runs a concurrency sweep with fixed
input and output lengths, samples the GPU, checks its own credibility and writes a run folder
(run.json, requests.jsonl, summary.csv, telemetry.jsonl, server.log).
Without --url and --engine it runs on the built-in simulator: a demo whose numbers are SIMULATED.

Exit status: 0 no check failed, 1 a check failed or the run failed, 2 bad usage or unreachable server.

${BENCH_OPTIONS_HELP}

${SERVER_OPTIONS_HELP}

${DISTRIBUTED_OPTIONS_HELP}`;

/** A worker's last words: its part and its shard folder (rank 0 prints the run's table). */
function workerSummary(
  result: BenchmarkResult,
  identity: DistributedIdentity,
  clean: (line: string) => string,
): number {
  const levels = result.record.distributed?.levels ?? [];
  const sent = levels.reduce((s, l) => s + l.requests, 0);
  const who = `worker ${identity.rank}/${identity.worldSize} (${identity.host})`;
  console.log(
    `${who}: ${sent} requests over ${levels.length} level${levels.length === 1 ? '' : 's'}; shard folder: ${result.dir}`,
  );
  if (result.failure) {
    console.error(clean(`servebench run: ${who}: ${result.failure}`));
    return result.exitCode ?? 1;
  }
  return result.record.status === 'cancelled' ? 130 : 0;
}

/** What a finished run prints: its table, its problems, its folder and, last, the capacity answer. */
function printMeasured(record: RunRecord, dir: string, clean: (line: string) => string): void {
  if (record.levels.length > 0) {
    console.log('');
    if (record.simulated) console.log('SIMULATED — built-in simulator, not a GPU measurement');
    console.log(formatLevelTable(record));
    console.log('* = level cut short');
    const turns = formatTurnTable(record);
    if (turns) console.log(`\nTTFT per conversation turn (ms):\n${turns}`);
    for (const kind of ['adapter', 'replica'] as const) {
      const groups = formatGroupTable(record, kind);
      if (groups) console.log(`\n${GROUP_TABLES[kind].title} (ms):\n${clean(groups)}`);
    }
    const workers = formatWorkerTable(record);
    if (workers) console.log(`\nload generators (offsets to rank 0's clock in ms):\n${workers}`);
  }
  for (const line of [...formatTtftSplits(record), ...formatPrecision(record)]) console.log(clean(line));
  // With nothing measured, the failure line below says all there is to say.
  if (record.levels.length > 0) for (const line of formatProblems(record)) console.log(clean(line));
  console.log(`\nrun folder: ${dir}`);
  // The answer comes last: it is what the user asked for.
  const searches = capacitySearches(record);
  for (const c of searches) {
    const title = searches.length > 1 ? capacityTitle(c) : null;
    console.log([...(title ? [`\n${title}:`] : []), ...capacityLines(c)].join('\n'));
  }
}

/** `servebench run`: one sweep, a table, a run folder, an exit code that scripts can use. */
export async function runCommand(argv: string[]): Promise<number> {
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({ args: argv, options: runOptions, strict: true, allowPositionals: false }));
  } catch (error) {
    if (helpAsked(argv)) {
      console.log(wrapHelp(RUN_HELP));
      return 0;
    }
    throw new UserError(argsErrorLine(error as Error, 'run'));
  }
  if (values.help) {
    console.log(wrapHelp(RUN_HELP));
    return 0;
  }
  const from = typeof values.from === 'string' ? await recordedConfig(values.from, values, process.env) : undefined;
  if (values.from !== undefined && !from)
    throw new UserError('--from needs a run folder (e.g. runs/20261130T094800Z-demo)');
  const config = benchConfigFromFlags(values, process.env, from?.base);
  for (const line of from?.notices ?? []) process.stderr.write(`${line}\n`);
  // A folder from someone else runs nothing it records (command, binaries, env) until the user says so.
  if (from) {
    const trust = values['trust-recorded-commands'] === true;
    await confirmRecorded(recordedToConfirm(from, config), from.fromRun.path, trust, terminalIo());
  }
  const distributed = await distributedRequest(values, process.env);
  // A worker attaches to the server rank 0 announces: only rank 0 checks (or launches) the configured one.
  if (!distributed || distributed.identity.rank === 0) await checkServerAddress(config.server);
  const controller = new AbortController();
  const activeRuns = new ActiveRuns();
  let interrupts = 0;
  // SIGINT is the user's Ctrl-C; SIGTERM and SIGHUP (the terminal closed, ssh dropped) stop the run the same way,
  // and the run folder says which.
  const onSignal = (signal: StopSignal): void => {
    interrupts++;
    if (signal === 'SIGHUP') quietOutput();
    if (interrupts === 1) {
      process.stderr.write(
        '\ncancelling: stopping requests and the server, saving what was measured (Ctrl-C again to force)\n',
      );
      controller.abort(STOP_WORDS[signal]);
    } else {
      activeRuns.saveSync(
        `forced exit (second ${signal === 'SIGINT' ? 'Ctrl-C' : signal}): the level in progress is in requests.jsonl only`,
      );
      process.exit(130);
    }
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  // What reaches the terminal goes through the same redaction as the run folder: a server may echo a key.
  const secrets = benchSecretValues(config, process.env);
  const clean = (line: string): string => redactLine(line, secrets);
  const progress = createProgressRenderer(process.stderr, Boolean(values.verbose));
  const render: typeof progress = (event) => progress(redactEvent(event, secrets));
  try {
    const deps = {
      ...defaultBenchmarkDeps(),
      onEvent: distributed && distributed.identity.rank > 0 && !values.verbose ? () => undefined : render,
      signal: controller.signal,
      activeRuns,
      ...(from ? { fromRun: from.fromRun } : {}),
    };
    const result = distributed ? await runDistributed(config, deps, distributed) : await runBenchmark(config, deps);
    const { record, dir } = result;
    if (distributed && distributed.identity.rank > 0) return workerSummary(result, distributed.identity, clean);
    printMeasured(record, dir, clean);
    if (result.failure) {
      console.error(clean(`servebench run: ${record.status}: ${result.failure}`));
      return result.exitCode ?? 1;
    }
    if (record.status === 'cancelled') {
      console.log(
        record.levels.length > 0
          ? 'run cancelled: the levels above were measured before the cancel (* = cut short)'
          : `run cancelled: ${record.error ?? 'before any level was measured'}`,
      );
      return 130;
    }
    return record.checks.some((c) => c.status === 'fail') ? 1 : 0;
  } finally {
    for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
  }
}
