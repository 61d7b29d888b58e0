import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { packageRoot } from '../src/core/package-root.js';

/** The simulator as its own process (so it never shares an event loop or a core with the client). */
export interface SimProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `servebench sim` on a free port and resolves once it prints its listening line. */
export async function startSimProcess(args: string[]): Promise<SimProcess> {
  const cli = `${packageRoot()}/dist/cli.js`;
  const child = spawn(process.execPath, [...process.execArgv, cli, 'sim', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // The bench may die (Ctrl-C, a closed pipe): never leave a simulator behind.
  const reap = (): void => {
    if (child.exitCode === null) child.kill('SIGKILL');
  };
  process.once('exit', reap);
  const url = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (line) => {
      const m = line.match(/running on (http:\/\/[^\s]+)/);
      if (m) resolve(m[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`sim exited with ${code} before listening`)));
  });
  child.stdout?.resume();
  return {
    url,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
