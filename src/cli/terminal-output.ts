import { stripControls } from '../shared/control-chars.js';

// The CLI's one output boundary. A server's error text, a log line, nvidia-smi's output, a GPU name or a run
// folder's label can carry ESC sequences that clear the screen, set the window title or rewrite the line
// above ("FAKE: all checks passed"). Everything written to stdout and stderr passes stripControls here, once,
// instead of at each place that prints. Only the progress bar's own cursor moves go around it (barStream).

type Write = NodeJS.WriteStream['write'];

/** The stream as cli-progress uses it: its own cursor and line controls, which must reach the terminal. */
export interface BarStream {
  readonly isTTY: boolean;
  readonly columns: number;
  write: Write;
}

const raw = new WeakMap<NodeJS.WriteStream, Write>();

function cleaned(chunk: unknown): unknown {
  if (typeof chunk === 'string') return stripControls(chunk);
  if (chunk instanceof Uint8Array) return stripControls(Buffer.from(chunk).toString('utf8'));
  return chunk;
}

/** Makes every write to `stream` pass the control-character filter (once per stream; later calls do nothing). */
function guardStream(stream: NodeJS.WriteStream): void {
  if (raw.has(stream)) return;
  const original = stream.write.bind(stream) as Write;
  raw.set(stream, original);
  stream.write = ((chunk: unknown, ...rest: unknown[]) =>
    (original as (c: unknown, ...r: unknown[]) => boolean)(cleaned(chunk), ...rest)) as Write;
}

/** Guards stdout and stderr: called once, first thing, by the CLI's entry point. */
export function guardTerminalOutput(): void {
  guardStream(process.stdout);
  guardStream(process.stderr);
}

/**
 * The stream for the progress bar alone: its writes skip the filter (its cursor moves are the point). What it
 * draws is servebench's own text (the level's load and counts), filtered by the bar's caller.
 */
export function barStream(stream: NodeJS.WriteStream): BarStream {
  const write = raw.get(stream) ?? (stream.write.bind(stream) as Write);
  return {
    get isTTY() {
      return Boolean(stream.isTTY);
    },
    get columns() {
      return stream.columns;
    },
    write,
  };
}

/**
 * A file's content sent to stdout (`report --out -`): byte for byte into a pipe or a file (the export is
 * already escaped for its format), through the filter when stdout is a terminal.
 */
export function writeData(text: string | Uint8Array): void {
  const stream = process.stdout;
  const write = stream.isTTY ? stream.write.bind(stream) : (raw.get(stream) ?? stream.write.bind(stream));
  write(text);
}
