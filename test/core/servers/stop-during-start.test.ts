import { afterEach, describe, expect, it } from 'vitest';
import { createServerManager, type ServerManager } from '../../../src/core/servers/manager.js';
import { ServerStartError } from '../../../src/core/servers/server-errors.js';
import { alivePids, eventLog, fakeConfig, launchedPids, makeRun } from './helpers.js';

const managers: ServerManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stopAll()));
});

describe('stopAll() while a server is still loading (app quit)', () => {
  it('stops the group, fails the start in one line, and walks stopping, stopped, failed', async () => {
    const { runDir, recordFile } = await makeRun();
    const manager = createServerManager({
      pollMs: 50,
      grace: { interruptMs: 5_000, terminateMs: 5_000, killMs: 5_000 },
    });
    managers.push(manager);
    const log = eventLog();
    const starting = manager.start(fakeConfig('vllm', recordFile, 'hang'), { runDir, onEvent: log.onEvent });
    const outcome = starting.then(
      () => undefined,
      (e: unknown) => e,
    );
    await log.waitFor((e) => e.type === 'server-progress' && e.key === 'graphs');
    await manager.stopAll();
    const error = await outcome;
    expect(error).toBeInstanceOf(ServerStartError);
    expect((error as Error).message.split('\n')).toHaveLength(1);
    const states = log.events.flatMap((e) => (e.type === 'server-state' ? [e.state] : []));
    expect(states).toEqual(['checking', 'launching', 'loading', 'stopping', 'stopped', 'failed']);
    expect(manager.running.size).toBe(0);
    expect(alivePids(launchedPids(recordFile))).toEqual([]);
  });
});
