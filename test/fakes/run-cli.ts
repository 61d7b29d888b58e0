import { spawn } from 'node:child_process';

const cli = new URL('../../bin/servebench.js', import.meta.url).pathname;

/** What a `servebench` child printed and how it ended. */
export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `servebench <args>` as a child without blocking this process: stand-in servers that live in the test's own
 * process must keep answering while the CLI runs (spawnSync would starve them).
 */
export function runCliAsync(args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}
