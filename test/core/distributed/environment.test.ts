import { describe, expect, it } from 'vitest';
import { discoverIdentity } from '../../../src/core/distributed/environment.js';

const expand = async (list: string): Promise<string[]> => (list === 'gpu[3-5]' ? ['gpu3', 'gpu4', 'gpu5'] : [list]);

describe('discoverIdentity', () => {
  it("takes rank, world size and rank 0's host from Slurm, with a port of the job's own", async () => {
    const env = {
      SLURM_PROCID: '2',
      SLURM_NTASKS: '3',
      SLURM_JOB_NODELIST: 'gpu[3-5]',
      SLURM_JOB_ID: '123456',
      SLURMD_NODENAME: 'gpu5',
    };
    expect(await discoverIdentity({}, env, expand)).toEqual({
      rank: 2,
      worldSize: 3,
      coordinator: { host: 'gpu3', port: 20_000 + (123456 % 10_000) },
      launcher: 'slurm',
      host: 'gpu5',
    });
  });

  it("takes an Indexed Job's completion index, with the world size and coordinator its manifest sets", async () => {
    const env = {
      JOB_COMPLETION_INDEX: '1',
      SERVEBENCH_WORLD_SIZE: '8',
      SERVEBENCH_COORDINATOR: 'sb-0.sb:29517',
      HOSTNAME: 'sb-1-x',
    };
    expect(await discoverIdentity({}, env, expand)).toMatchObject({
      rank: 1,
      worldSize: 8,
      coordinator: { host: 'sb-0.sb', port: 29517 },
      launcher: 'kubernetes',
    });
  });

  it('lets flags override the environment (any other launcher)', async () => {
    const env = { SLURM_PROCID: '0', SLURM_NTASKS: '1', SLURM_JOB_NODELIST: 'gpu3' };
    const id = await discoverIdentity({ rank: 3, worldSize: 4, coordinator: '[::1]:9000' }, env, expand);
    expect(id).toMatchObject({ rank: 3, worldSize: 4, coordinator: { host: '::1', port: 9000 }, launcher: 'flags' });
  });

  it('reads torchrun style RANK, WORLD_SIZE and MASTER_ADDR', async () => {
    const env = { RANK: '1', WORLD_SIZE: '2', MASTER_ADDR: 'head', MASTER_PORT: '29500' };
    expect(await discoverIdentity({}, env, expand)).toMatchObject({
      rank: 1,
      worldSize: 2,
      coordinator: { host: 'head', port: 29500 },
      launcher: 'torch',
    });
  });

  it('fails in one line naming the fix', async () => {
    await expect(discoverIdentity({}, {}, expand)).rejects.toThrow(/--rank R --world-size N --coordinator HOST:PORT/);
    await expect(discoverIdentity({ rank: 4, worldSize: 4, coordinator: 'a:1' }, {}, expand)).rejects.toThrow(
      /rank 4 is not below the world size 4/,
    );
    await expect(discoverIdentity({ rank: 0, worldSize: 2, coordinator: 'a' }, {}, expand)).rejects.toThrow(
      /must be HOST:PORT/,
    );
    await expect(discoverIdentity({ rank: 0, worldSize: 2 }, {}, expand)).rejects.toThrow(/needs rank 0's address/);
    await expect(discoverIdentity({}, { SLURM_PROCID: 'x', SLURM_NTASKS: '2' }, expand)).rejects.toThrow(
      /SLURM_PROCID is 'x'/,
    );
  });
});
