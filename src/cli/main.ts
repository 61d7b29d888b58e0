import { isUserError } from '../core/errors.js';
import { SERVEBENCH_VERSION } from '../core/version.js';
import { helpAsked } from './args-error.js';
import { wrapHelp } from './help-text.js';
import { guardTerminalOutput } from './terminal-output.js';

const HELP = `servebench ${SERVEBENCH_VERSION} — trustworthy speed numbers for LLM servers

Usage: servebench <command> [options]

Commands:
  run      launch (or attach to) a server, run a concurrency sweep, write a run folder
  sim      run the simulated engine (an OpenAI-compatible server with a known truth)
  gpu      list the GPUs and print one telemetry sample
  ui       serve the app to a browser on this machine (start runs, watch them live, open past runs)
  report   render a run folder as html, pdf, md, csv, json or vllm-json
  compare  put runs and vllm/sglang result files side by side, with confidence intervals and verdicts
  merge    build one run folder from the shard folders of a distributed run (run --distributed)
  slurm    print an sbatch script that runs one benchmark from many nodes
  k8s      print Kubernetes manifests (Indexed Job, headless Service, ConfigMap) for the same

Run 'servebench <command> --help' for the options of a command.
Without a GPU, 'servebench run' uses the built-in simulator: its numbers are simulated.`;

type Command = (argv: string[]) => Promise<number>;

const commands: Record<string, () => Promise<Command>> = {
  run: async () => (await import('./run-command.js')).runCommand,
  sim: async () => (await import('./sim-command.js')).simCommand,
  gpu: async () => (await import('./gpu-command.js')).gpuCommand,
  ui: async () => (await import('./ui-command.js')).uiCommand,
  report: async () => (await import('./report-command.js')).reportCommand,
  compare: async () => (await import('./compare-command.js')).compareCommand,
  merge: async () => (await import('./merge-command.js')).mergeCommand,
  slurm: async () => (await import('./launcher-command.js')).slurmCommand,
  k8s: async () => (await import('./launcher-command.js')).k8sCommand,
};

/** Entry point: dispatches to a command and maps errors to one line and an exit code. */
export async function main(argv: string[]): Promise<number> {
  // Before anything prints: no foreign text reaches the terminal with its control characters.
  guardTerminalOutput();
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(wrapHelp(HELP));
    return 0;
  }
  if (name === '--version' || name === '-v') {
    console.log(SERVEBENCH_VERSION);
    return 0;
  }
  const load = commands[name];
  // `servebench --bogus --help`: help wins over what is not a command, as it wins over a bad flag of a command.
  if (!load && name.startsWith('-') && helpAsked(rest)) {
    console.log(wrapHelp(HELP));
    return 0;
  }
  if (!load) {
    console.error(`servebench: unknown command '${name}'; run 'servebench --help' for the list.`);
    return 2;
  }
  try {
    return await (
      await load()
    )(rest);
  } catch (error) {
    if (isUserError(error)) {
      console.error(`servebench ${name}: ${error.message}`);
      return error.exitCode;
    }
    throw error;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exitCode = 1;
  },
);
