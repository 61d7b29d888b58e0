import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isGroupAlive, signalGroup, startWatchdog, waitGroupGone } from '../../../src/core/servers/process-group.js';

const SLEEPER = fileURLToPath(new URL('../../fakes/engine-sleeper.mjs', import.meta.url));

function sleeperGroup(): Promise<number> {
  const child = spawn(process.execPath, [SLEEPER], { detached: true, stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
  return new Promise((resolve) => child.once('message', () => resolve(child.pid as number)));
}

describe('watchdog', () => {
  it('stands down when its owner stopped the group itself, and leaves the group alone', async () => {
    const pgid = await sleeperGroup();
    const watchdog = startWatchdog(pgid);
    watchdog.standDown();
    await watchdog.exited;
    expect(isGroupAlive(pgid)).toBe(true);
    signalGroup(pgid, 'SIGKILL');
    expect(await waitGroupGone(pgid, 30_000)).toBe(true);
  });
});
