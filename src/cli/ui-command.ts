import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createServebenchService } from '../core/api.js';
import { defaultBenchmarkDeps } from '../core/default-deps.js';
import { plainNumber } from '../shared/field-values.js';
import { UserError } from '../core/errors.js';
import { packageRoot } from '../core/package-root.js';
import { listPresets } from '../core/servers/presets.js';
import { createSettingsStore, userDataDir } from '../core/settings/settings-store.js';
import { startUiServer } from '../core/ui-server/index.js';
import { checkRunsParent } from '../core/runs/run-store.js';
import { wrapHelp } from './help-text.js';
import { helpAsked } from './args-error.js';
import { STOP_SIGNALS, STOP_WORDS, quietOutput, type StopSignal } from './stop-signals.js';

const HELP = `Usage: servebench ui [--port P] [--out DIR]

Serves the servebench app to a browser on this machine: start runs, watch them live, open past runs.
Open the address it prints (http://127.0.0.1:P/?token=...): the token, new at every start, is what
lets a page drive runs, so other users of this machine cannot. The engine runs in this process;
Ctrl-C cancels an active run, saves what was measured and exits. It listens on 127.0.0.1 only.

Options:
  --port P     port to listen on (default 5199; 0 = a free one)
  --out DIR    parent folder of run folders (default ./runs)
  -h, --help   this help`;

/** What tests may replace: the built renderer's folder. */
export interface UiCommandOverrides {
  staticDir?: string;
}

/** Bad clients the server survived are said on stderr, up to this many (a fuzzer must not flood the terminal). */
const MAX_ERROR_LINES = 20;

/** One line naming the fix for a port the server cannot listen on, or null for another failure. */
export function listenErrorLine(error: unknown, port: number): string | null {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'EADDRINUSE')
    return `port ${port} is already in use (another servebench ui?); pick another with --port (0 = any free port)`;
  if (code === 'EACCES') return `no permission to listen on port ${port}; use a port above 1023 with --port`;
  if (code === 'EADDRNOTAVAIL') return `cannot listen on 127.0.0.1 here; check the loopback interface`;
  return null;
}

/** `servebench ui`: the app over WebSocket, in the browser, until Ctrl-C. */
export async function uiCommand(argv: string[], overrides: UiCommandOverrides = {}): Promise<number> {
  let values: { port?: string; out?: string; help?: boolean };
  try {
    values = parseArgs({
      args: argv,
      options: { port: { type: 'string' }, out: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    if (helpAsked(argv)) {
      console.log(wrapHelp(HELP));
      return 0;
    }
    const msg = (error as Error).message.split('\n')[0] ?? 'bad arguments';
    throw new UserError(`${msg.replace(/\.$/, '')}; run 'servebench ui --help' for the options`);
  }
  if (values.help) {
    console.log(wrapHelp(HELP));
    return 0;
  }
  const port = values.port === undefined ? 5199 : plainNumber(values.port, true);
  if (!Number.isSafeInteger(port) || port < 0 || port > 65535) {
    throw new UserError(`--port must be a whole number from 0 to 65535 (got '${values.port}')`);
  }
  const outDir = resolve(values.out ?? 'runs');
  // Before listening: a file, a run folder or a system folder as --out is said now, not at the first run.
  await checkRunsParent(outDir);
  const staticDir = overrides.staticDir ?? join(packageRoot(), 'out', 'renderer');
  if (!existsSync(join(staticDir, 'index.html'))) {
    throw new UserError(`the app is not built (${staticDir} is missing): run \`npm run build\` first`);
  }
  const service = createServebenchService({
    outDir,
    deps: defaultBenchmarkDeps(),
    listPresets: () => listPresets(),
    // Browser mode: no keychain here, so secrets stay in this process's memory, never on disk.
    settings: createSettingsStore({
      dir: userDataDir(),
      runsDir: outDir,
      onWarning: (line) => console.error(`servebench ui: ${line}`),
    }),
  });
  let errorLines = 0;
  const onError = (line: string): void => {
    errorLines++;
    if (errorLines <= MAX_ERROR_LINES) console.error(`servebench ${line}`);
    if (errorLines === MAX_ERROR_LINES) console.error('servebench ui server: (further client errors not shown)');
  };
  let server;
  try {
    server = await startUiServer({ service, port, staticDir, onError });
  } catch (error) {
    const line = listenErrorLine(error, port);
    if (line) throw new UserError(line);
    throw error;
  }
  // The token is in the URL (as Jupyter prints it): whoever opens this address may start runs.
  console.log(`servebench ui: open ${server.url}  (runs in ${outDir}; Ctrl-C to stop)`);

  // A forced exit still marks the active run cancelled, as `servebench run` does.
  const forceExit = (signal: StopSignal): never => {
    service.saveActiveSync?.(
      `forced exit (second ${signal === 'SIGINT' ? 'Ctrl-C' : signal}): the level in progress is in requests.jsonl only`,
    );
    process.exit(130);
  };
  // Ctrl-C, SIGTERM and SIGHUP (the terminal closed, ssh dropped) all stop the server and cancel the active run.
  const stoppedBy = await new Promise<StopSignal>((resolveStop) => {
    // The first one stops cleanly; from then on, another forces the exit.
    const onSignal = (signal: StopSignal): void => {
      for (const s of STOP_SIGNALS) {
        process.off(s, onSignal);
        process.on(s, forceExit);
      }
      resolveStop(signal);
    };
    for (const s of STOP_SIGNALS) process.on(s, onSignal);
  });
  if (stoppedBy === 'SIGHUP') quietOutput();
  const active = await service.activeRun();
  if (active) {
    console.log(`servebench ui: cancelling run ${active.runId}, saving what was measured (Ctrl-C again to force)`);
    await (service.stopActive?.(STOP_WORDS[stoppedBy]) ?? service.cancelRun(active.runId)).catch(() => undefined);
    await service.idle();
  }
  await server.close();
  console.log('servebench ui: stopped');
  return 0;
}
