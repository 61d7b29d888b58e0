import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runBenchmark } from '../../../src/core/benchmark.js';
import { UserError } from '../../../src/core/errors.js';
import type { StartServerOptions } from '../../../src/core/servers/types.js';
import { BenchConfigSchema } from '../../../src/shared/config.js';

const dirs: string[] = [];
afterAll(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

/** The options the run starts its server with (the start then fails, so nothing is measured). */
async function startOptions(turns: number): Promise<StartServerOptions> {
  const out = await mkdtemp(join(tmpdir(), 'sb-sizing-'));
  dirs.push(out);
  let seen: StartServerOptions | undefined;
  const result = await runBenchmark(
    BenchConfigSchema.parse({ out, concurrency: [2], inputLen: [100], outputLen: [20], turns, requestsPerRound: 12 }),
    {
      startServer: async (_config, options) => {
        seen = options;
        throw new UserError('no server in this test');
      },
    },
  );
  expect(result.failure).toBe('no server in this test');
  return seen!;
}

describe('server sizing', () => {
  it("sizes the server for a conversation's last turn, which carries the whole history", async () => {
    expect((await startOptions(1)).largestRequest).toEqual({ inputTokens: 100, outputTokens: 20 });
    // Turn 3 sends 2 x (100 + 20) tokens of history plus its own 100-token message.
    expect((await startOptions(3)).largestRequest).toEqual({ inputTokens: 340, outputTokens: 20 });
  });
});
