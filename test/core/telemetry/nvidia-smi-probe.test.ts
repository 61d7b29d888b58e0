import { describe, expect, it } from 'vitest';
import { createExecaRunner, type CommandRunner, type ExecResult } from '../../../src/core/telemetry/exec.js';
import { LOOP_FIELDS } from '../../../src/core/telemetry/nvidia-smi-fields.js';
import { probeFields, refusedFields } from '../../../src/core/telemetry/nvidia-smi-probe.js';
import {
  parseComputeApps,
  parseCudaVersion,
  queryGpuInfo,
  queryGpuProcesses,
} from '../../../src/core/telemetry/nvidia-smi-static.js';
import { FAKE_NVIDIA_SMI, scenarioEnv } from './helpers.js';

const runner = createExecaRunner();

describe('probing nvidia-smi fields (recorded driver generations)', () => {
  it('535: keeps clocks_throttle_reasons.active and every field', async () => {
    const probe = await probeFields(runner, FAKE_NVIDIA_SMI, LOOP_FIELDS, scenarioEnv('h100-535'));
    expect(probe.ok).toBe(true);
    if (!probe.ok) return;
    expect(probe.fields.query).toEqual([...LOOP_FIELDS]);
    expect(probe.fields.dropped).toEqual([]);
    expect(probe.lines).toHaveLength(1);
  });

  it('555: the old throttle name is refused, clocks_event_reasons.active is used in its place', async () => {
    const probe = await probeFields(runner, FAKE_NVIDIA_SMI, LOOP_FIELDS, scenarioEnv('rtx4090-555-thermal'));
    expect(probe.ok).toBe(true);
    if (!probe.ok) return;
    expect(probe.fields.query).toContain('clocks_event_reasons.active');
    expect(probe.fields.query).not.toContain('clocks_throttle_reasons.active');
    expect(probe.fields.canonical).toContain('clocks_throttle_reasons.active');
    expect(probe.fields.dropped).toEqual([]);
  });

  it('470: an unknown field (error on stderr) is dropped, the rest kept', async () => {
    const probe = await probeFields(runner, FAKE_NVIDIA_SMI, LOOP_FIELDS, scenarioEnv('t4-470-unknown-field'));
    expect(probe.ok).toBe(true);
    if (!probe.ok) return;
    expect(probe.fields.dropped).toEqual(['temperature.memory']);
    expect(probe.fields.query).toHaveLength(LOOP_FIELDS.length - 1);
  });

  it('multi-GPU: one probe line per GPU', async () => {
    const probe = await probeFields(runner, FAKE_NVIDIA_SMI, LOOP_FIELDS, scenarioEnv('a100x2-550-power-cap'));
    expect(probe.ok && probe.lines.length).toBe(2);
  });

  it('a driver that is not loaded gives one line naming the fix', async () => {
    const probe = await probeFields(runner, FAKE_NVIDIA_SMI, LOOP_FIELDS, scenarioEnv('no-driver'));
    expect(probe).toEqual({
      ok: false,
      reason: expect.stringMatching(/cannot talk to the NVIDIA driver.*check that the driver is installed and loaded/),
    });
  });

  it('falls back to probing field by field when the error does not name the field', async () => {
    const known = new Set(['index', 'clocks.sm', 'pstate']);
    const calls: string[][] = [];
    const fake: CommandRunner = {
      async run(_file, args): Promise<ExecResult> {
        calls.push(args);
        const fields = (args[0] ?? '').replace('--query-gpu=', '').split(',');
        if (fields.every((f) => known.has(f)))
          return { exitCode: 0, stdout: `${fields.map(() => '1').join(', ')}\n`, stderr: '' };
        return {
          exitCode: 2,
          stdout: "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n",
          stderr: '',
        };
      },
      spawnLines: () => {
        throw new Error('not used');
      },
    };
    const probe = await probeFields(
      fake,
      'nvidia-smi',
      ['index', 'clocks.sm', 'temperature.memory', 'pstate'],
      process.env,
    );
    expect(probe.ok).toBe(true);
    if (!probe.ok) return;
    expect(probe.fields.query).toEqual(['index', 'clocks.sm', 'pstate']);
    expect(probe.fields.dropped).toEqual(['temperature.memory']);
  });

  it('reads the field name nvidia-smi refuses', () => {
    expect(refusedFields('Field "clocks_throttle_reasons.active" is not a valid field to query.\n\n')).toEqual([
      'clocks_throttle_reasons.active',
    ]);
  });
});

describe('static facts and processes', () => {
  it('reads name, driver, CUDA (from the banner), memory, power limit and max clocks per GPU', async () => {
    const res = await queryGpuInfo(runner, FAKE_NVIDIA_SMI, scenarioEnv('a100x2-550-power-cap'));
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    expect(res.gpus).toHaveLength(2);
    expect(res.gpus[1]).toEqual({
      index: 1,
      name: 'NVIDIA A100-SXM4-80GB',
      uuid: 'GPU-6f7e8d9c-1111-4b2a-9c8d-7e6f5a4b3c2d',
      busId: '00000000:0F:00.0',
      driver: '550.54.15',
      cudaVersion: '12.4',
      memoryMiB: 81920,
      powerLimitW: 400,
      maxSmClockMhz: 1410,
      maxMemClockMhz: 1593,
    });
  });

  it('lists processes holding GPU memory', async () => {
    const res = await queryGpuProcesses(runner, FAKE_NVIDIA_SMI, scenarioEnv('rtx4090-555-thermal'));
    expect(res).toEqual({ ok: true, processes: [{ pid: 48213, name: 'python3', usedMemoryMiB: 18210 }] });
    expect(parseComputeApps('')).toEqual([]);
    expect(parseComputeApps('No running processes found\n')).toEqual([]);
    expect(parseComputeApps('17, /usr/bin/python3 -m vllm, serve, [N/A]\n')).toEqual([
      { pid: 17, name: '/usr/bin/python3 -m vllm, serve', usedMemoryMiB: null },
    ]);
  });

  it('parses the CUDA version from banners of several generations', () => {
    expect(parseCudaVersion('| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |')).toBe(
      '12.2',
    );
    expect(parseCudaVersion('| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |')).toBe(
      '11.4',
    );
    expect(parseCudaVersion('no banner')).toBeNull();
  });
});
