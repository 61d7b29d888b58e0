import { realpath } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { UserError } from '../core/errors.js';
import { DiskError, nodeRunFs, replaceFile } from '../core/runs/run-fs.js';
import { plainNumber } from '../shared/field-values.js';
import { argsErrorLine, helpAsked } from './args-error.js';
import { COMPARE_CLI_FORMATS, renderComparison } from '../core/report/compare/index.js';
import type { CompareCliFormat } from '../core/report/compare/index.js';
import { INPUT_FORMATS, parseFormatIn } from '../core/report/compare/input-formats.js';
import { BOOTSTRAP_SEED } from '../core/report/compare/statistics.js';
import { wrapHelp } from './help-text.js';
import { writeData } from './terminal-output.js';

const HELP = `Usage: servebench compare RUN_OR_FILE RUN_OR_FILE [...] [--format html|md|table] [--out FILE]

Puts runs side by side: first what differs in their conditions (engine, model, quantization, GPU, lengths,
diffusion parameters, servebench version, simulated), then per load both measured the ratio of output
throughput and of TTFT/TPOT/E2E p50/p95 against the first input, with a 95 % confidence interval of the
difference (block bootstrap: rounds, then requests within them; seeded) and a verdict: faster, slower, or
no difference the data can show.

Inputs, told apart by their content: servebench run folders (a server sweep gives one series per
configuration), files of 'servebench report --format json' (the run's summaries: ratios, no intervals),
result files of 'vllm bench serve --save-result' (per-request intervals need --save-detailed), SGLang
bench_serving .jsonl files (per-request TTFT needs --output-details), AIPerf profile exports, guidellm
benchmarks.json, inference-perf lifecycle reports and llm-d Benchmark Reports. Figures a file lacks are named,
never made up; a figure another tool defines otherwise than servebench is shown under that tool's name with its
definition, never compared with servebench's (docs/formats.md).

Options:
  --format FORMAT  html (default; one offline file with overlaid charts) | md | table (the terminal's, to stdout)
  --out FILE       where to write it (default compare.html / compare.md here, stdout for table); '-' writes to stdout
  --format-in FMT  read every input that is not a servebench run with FMT's reader, not by its content:
${INPUT_FORMATS.map((f) => `                     ${f.id.padEnd(15)} ${f.what}`).join('\n')}
  --seed N         bootstrap seed (default ${BOOTSTRAP_SEED}); the same inputs and seed give the same report
  -h, --help       this help`;

/** The one place an input stands for: its real path, a folder's own run.json as the folder. */
async function inputIdentity(path: string): Promise<string> {
  const real = await realpath(resolve(path)).catch(() => resolve(path));
  return basename(real) === 'run.json' ? dirname(real) : real;
}

/** One run against itself differs in nothing: refused, as the app refuses it (a copy elsewhere is another run). */
async function refuseRepeats(paths: readonly string[]): Promise<void> {
  const seen = new Map<string, string>();
  for (const p of paths) {
    const id = await inputIdentity(p);
    const first = seen.get(id);
    if (first !== undefined)
      throw new UserError(`${p} is given twice (also as ${first}): give each run once to compare them`);
    seen.set(id, p);
  }
}

/** `servebench compare A B [...]`: one comparison report; exit 2 with one line for a bad input or option. */
export async function compareCommand(argv: string[]): Promise<number> {
  let values: { format?: string; out?: string; seed?: string; 'format-in'?: string; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        format: { type: 'string', short: 'f' },
        out: { type: 'string', short: 'o' },
        seed: { type: 'string' },
        'format-in': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    if (helpAsked(argv)) {
      console.log(wrapHelp(HELP));
      return 0;
    }
    throw new UserError(argsErrorLine(error as Error, 'compare'));
  }
  if (values.help) {
    console.log(wrapHelp(HELP));
    return 0;
  }
  const format = values.format ?? 'html';
  if (!(COMPARE_CLI_FORMATS as readonly string[]).includes(format))
    throw new UserError(`--format must be one of ${COMPARE_CLI_FORMATS.join(', ')} (got '${format}')`);
  const formatIn = values['format-in'] === undefined ? undefined : parseFormatIn(values['format-in']);
  const seed = values.seed === undefined ? undefined : plainNumber(values.seed, true);
  if (seed !== undefined && !(Number.isInteger(seed) && seed >= 0))
    throw new UserError(`--seed must be a whole number of 0 or more (got '${values.seed}')`);
  if (positionals.length < 1)
    throw new UserError(
      'give two or more run folders or result files, e.g. servebench compare runs/a runs/b (see --help)',
    );
  await refuseRepeats(positionals);
  const result = await renderComparison(positionals, format as CompareCliFormat, { seed, formatIn });
  if (result.series < 2)
    throw new UserError(
      'give two or more run folders or result files (one run folder is enough only for a server sweep)',
    );
  if (values.out === '-' || (format === 'table' && values.out === undefined)) {
    writeData(result.text);
    return 0;
  }
  const file = resolve(values.out ?? `compare.${format}`);
  try {
    // Replaced whole: a full disk leaves the report that was there, never half a new one.
    await replaceFile(nodeRunFs, file, result.text);
  } catch (error) {
    throw new DiskError(file, error);
  }
  console.log(`${format} comparison of ${result.series} series (${result.levels} matching levels) written to ${file}`);
  return 0;
}
