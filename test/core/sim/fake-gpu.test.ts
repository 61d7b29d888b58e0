import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { FakeGpu, writeGpuState } from '../../../src/core/sim/fake-gpu.js';
import {
  loadProfile,
  REASON_HW_THERMAL,
  REASON_IDLE,
  REASON_SW_POWER_CAP,
  REASON_SW_THERMAL,
  type FakeGpuReading,
  type FakeGpuState,
} from '../../../src/core/sim/index.js';
import { closeAll, postJson, startSim, tempDir, waitFor } from './helpers.js';
import { VirtualClock } from './virtual-clock.js';

afterAll(closeAll);
const dir = tempDir();
const SMI = fileURLToPath(new URL('../../../resources/fake-nvidia-smi', import.meta.url));

/** Runs the GPU model under a duty cycle for `seconds` of virtual time, ticking every 200 ms. */
function run(gpu: FakeGpu, seconds: number, duty = 1, t0 = 0): number {
  let t = t0;
  for (let i = 0; i < seconds * 5; i++) {
    gpu.addBusy(200 * duty);
    t += 200;
    gpu.tick(t);
  }
  return t;
}

describe('fake GPU model', () => {
  it('idles cool with the idle bit and heats under load towards its equilibrium', () => {
    const p = loadProfile('h200-llama8b-bf16');
    const gpu = new FakeGpu(p, 0);
    run(gpu, 1, 0);
    expect(gpu.mask).toBe(REASON_IDLE);
    expect(gpu.state().gpus[0]).toMatchObject({ pstate: 'P8', smClockMhz: p.gpuIdleSmClockMhz, utilPct: 0 });
    const t = run(gpu, 30, 1, 1000);
    const hot = gpu.tempC;
    expect(hot).toBeGreaterThan(p.gpuAmbientC + 10);
    expect(gpu.mask).toBe(0); // full speed, below the power limit, not hot
    expect(gpu.clockRatio).toBe(1);
    expect(gpu.state().gpus[0]).toMatchObject({ pstate: 'P0', smClockMhz: p.gpuMaxSmClockMhz, utilPct: 100 });
    run(gpu, 30, 1, t);
    expect(gpu.tempC).toBeGreaterThan(hot); // still climbing towards ambient + heat/cool
    expect(gpu.tempC).toBeLessThan(p.gpuAmbientC + p.gpuHeatRate / p.gpuCoolRate);
  });

  it('throttles past the thermal limit: clock falls, thermal bits set, then recovers when idle', () => {
    const p = loadProfile('thermal-throttle-demo');
    const gpu = new FakeGpu(p, 0);
    const t = run(gpu, 3);
    expect(gpu.tempC).toBeGreaterThan(p.gpuThermalLimitC);
    expect(gpu.clockRatio).toBeLessThan(0.8);
    expect(gpu.clockRatio).toBeGreaterThanOrEqual(p.gpuMinClockRatio);
    expect(gpu.mask & REASON_SW_THERMAL).toBe(REASON_SW_THERMAL);
    expect(gpu.mask & REASON_HW_THERMAL).toBe(REASON_HW_THERMAL);
    expect(gpu.state().gpus[0]!.smClockMhz).toBe(Math.round(p.gpuMaxSmClockMhz * gpu.clockRatio));
    run(gpu, 20, 0, t);
    expect(gpu.clockRatio).toBe(1);
    expect(gpu.mask).toBe(REASON_IDLE);
  });

  it('the thermal demo slows down where an H200 does (near 90 °C), and stays there while throttled', () => {
    const p = loadProfile('thermal-throttle-demo');
    expect(p.gpuThermalLimitC).toBe(loadProfile('h200-llama8b-bf16').gpuThermalLimitC);
    const gpu = new FakeGpu(p, 0);
    let t = 0;
    const hot: number[] = [];
    for (let i = 0; i < 100; i++) {
      gpu.addBusy(200);
      gpu.tick((t += 200));
      if (gpu.mask & REASON_SW_THERMAL) hot.push(gpu.tempC);
    }
    // Within a few seconds of load, and never at a temperature no H200 throttles at.
    expect(hot.length).toBeGreaterThan(80);
    expect(Math.min(...hot)).toBeGreaterThanOrEqual(p.gpuThermalLimitC - 2);
    expect(Math.max(...hot)).toBeLessThan(100);
  });

  it('is power-capped at full load without losing clock on a power-limited profile', () => {
    const p = loadProfile('power-capped');
    const gpu = new FakeGpu(p, 0);
    run(gpu, 60);
    expect(gpu.mask).toBe(REASON_SW_POWER_CAP);
    expect(gpu.clockRatio).toBe(1);
    expect(gpu.powerW).toBe(p.gpuPowerLimitW);
    expect(gpu.tempC).toBeLessThan(p.gpuThermalLimitC);
  });

  it('keeps the state file up to date under load, tick by tick in virtual time (thermal demo profile)', async () => {
    const p = loadProfile('thermal-throttle-demo');
    const a = await thermalRun(join(dir, 'virtual-gpu-a.json'));
    // the same inputs give the same states: a second run reads exactly the same
    expect(await thermalRun(join(dir, 'virtual-gpu-b.json'))).toEqual(a);
    const { readings, released } = a;
    expect(readings[0]!.throttleMask).toBe(REASON_IDLE);
    const k = readings.findIndex((g) => (g.throttleMask & REASON_SW_THERMAL) !== 0);
    expect(k).toBeGreaterThan(1);
    for (const g of readings.slice(1, k)) {
      expect(g.tempC).toBeLessThanOrEqual(p.gpuThermalLimitC);
      expect(g.smClockMhz).toBe(p.gpuMaxSmClockMhz);
    }
    // The bit is set once the limit is passed; the file rounds, so that reading can show the limit itself.
    expect(readings[k]!.tempC).toBeGreaterThanOrEqual(p.gpuThermalLimitC);
    expect(readings[k]!.smClockMhz).toBeLessThan(p.gpuMaxSmClockMhz);
    const hot = readings.slice(k);
    for (let i = 1; i < hot.length; i++) {
      expect(hot[i]!.throttleMask & REASON_SW_THERMAL).toBe(REASON_SW_THERMAL);
      expect(hot[i]!.smClockMhz).toBeLessThanOrEqual(hot[i - 1]!.smClockMhz);
    }
    expect(hot.at(-1)!.smClockMhz).toBe(Math.round(p.gpuMaxSmClockMhz * p.gpuMinClockRatio));
    const hw = readings.filter((g) => (g.throttleMask & REASON_HW_THERMAL) !== 0);
    expect(hw.length).toBeGreaterThan(0);
    for (const g of hw) expect(g.tempC).toBeGreaterThanOrEqual(p.gpuThermalLimitC + 5);
    expect(released.processes).toEqual([]);
    expect(released.gpus[0]!.throttleMask).toBe(REASON_IDLE);
  });

  it('keeps the state file up to date under load on the real clock', async () => {
    const p = loadProfile('thermal-throttle-demo');
    const gpuStateFile = join(dir, 'live-gpu.json');
    const s = await startSim({ profile: p, gpuStateFile, gpuTickMs: 100 });
    const read = (): FakeGpuState => JSON.parse(readFileSync(gpuStateFile, 'utf8')) as FakeGpuState;
    const cool = read();
    expect(cool.gpus[0]!.throttleMask).toBe(REASON_IDLE);
    let stop = false;
    const load = (async () => {
      while (!stop)
        await (await postJson(`${s.url}/v1/completions`, { prompt: 'x', max_tokens: 40, ignore_eos: true })).json();
    })();
    // However fast or slow the machine, steady load takes the card past its limit sooner or later.
    const hot = await waitFor(() => {
      const state = read();
      const g = state.gpus[0]!;
      return (g.throttleMask & REASON_SW_THERMAL) !== 0 && g.smClockMhz < g.maxSmClockMhz ? { state, g } : undefined;
    }, 'thermal throttling with a lowered clock in the state file');
    stop = true;
    await load;
    expect(hot.state.updatedAtMs).toBeGreaterThan(cool.updatedAtMs);
    // At the limit is throttling too: the file rounds, and a fast poll catches the first hot tick.
    expect(hot.g.tempC).toBeGreaterThanOrEqual(p.gpuThermalLimitC);
    await s.close();
    expect(read().processes).toEqual([]);
    expect(read().gpus[0]!.throttleMask).toBe(REASON_IDLE);
  });
});

/** A sim on a virtual clock under one long stream; the state file read after every 100 ms GPU tick, 3 s long. */
async function thermalRun(file: string): Promise<{ readings: FakeGpuReading[]; released: FakeGpuState }> {
  const clock = new VirtualClock();
  const s = await startSim({
    profile: loadProfile('thermal-throttle-demo'),
    gpuStateFile: file,
    gpuTickMs: 100,
    clock,
  });
  const read = (): FakeGpuState => JSON.parse(readFileSync(file, 'utf8')) as FakeGpuState;
  const readings = [read().gpus[0]!];
  const stream = postJson(`${s.url}/v1/completions`, { prompt: 'x', max_tokens: 2000, ignore_eos: true, stream: true });
  const body = stream.then((r) => r.text()).catch(() => 'cut');
  await waitFor(() => s.engineCounts().running + s.engineCounts().waiting === 1, 'the request in the engine');
  for (let i = 0; i < 30; i++) {
    clock.advance(100);
    readings.push(read().gpus[0]!);
  }
  expect(s.engineCounts().finished).toBe(0); // still under load at the end
  await s.close();
  await body;
  // updatedAtMs is the file's wall-clock write time, the one thing here not on the sim's clock
  return { readings, released: { ...read(), updatedAtMs: 0 } };
}

function smi(
  args: string[],
  stateFile: string | null,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = { ...process.env };
  delete env.SERVEBENCH_FAKE_GPU_STATE;
  if (stateFile) env.SERVEBENCH_FAKE_GPU_STATE = stateFile;
  return new Promise((resolve) => {
    execFile(process.execPath, [SMI, ...args], { env, cwd: dir }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('fake nvidia-smi', () => {
  const stateFile = join(dir, 'smi-gpu.json');
  const p = loadProfile('power-capped');
  const gpu = new FakeGpu({ ...p, gpuCount: 2 }, 0);
  run(gpu, 5);
  writeGpuState(stateFile, gpu.state());
  const QUERY =
    'timestamp,index,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,temperature.memory,power.draw,enforced.power.limit,utilization.gpu,memory.used,memory.total,pstate,clocks_throttle_reasons.active';

  it('answers --query-gpu like the real one (csv, noheader, nounits)', async () => {
    const r = await smi([`--query-gpu=${QUERY}`, '--format=csv,noheader,nounits'], stateFile);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    const f = lines[0]!.split(', ');
    expect(f).toHaveLength(14);
    expect(f[0]).toMatch(/^\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/);
    expect(f.slice(1, 5)).toEqual([
      '0',
      String(p.gpuMaxSmClockMhz),
      String(p.gpuMaxSmClockMhz),
      String(p.gpuMemClockMhz),
    ]);
    expect(f[7]).toBe('700.00');
    expect(f[9]).toBe('100');
    expect(f[12]).toBe('P0');
    expect(f[13]).toBe('0x0000000000000004');
    expect(lines[1]!.split(', ')[1]).toBe('1');
  });

  it('accepts both reason-field names, prints units and a header without nounits, [N/A] where it has no value, -i', async () => {
    const r = await smi(
      [
        '--query-gpu=index,clocks_event_reasons.active,clocks_throttle_reasons.sw_power_cap,fan.speed,power.draw,memory.used',
        '--format=csv',
        '-i',
        '1',
      ],
      stateFile,
    );
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe(
      'index, clocks_event_reasons.active, clocks_throttle_reasons.sw_power_cap, fan.speed [%], power.draw [W], memory.used [MiB]',
    );
    expect(r.stdout.split('\n')[1]).toBe(`1, 0x0000000000000004, Active, [N/A], 700.00 W, ${p.gpuMemUsedMib} MiB`);
    expect((await smi(['-L', '-i', '7'], stateFile)).code).toBe(6);
  });

  it('refuses an unknown field with the real message and a non-zero exit', async () => {
    const r = await smi(['--query-gpu=index,foo.bar', '--format=csv,noheader,nounits'], stateFile);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toContain('Field "foo.bar" is not a valid field to query.');
    expect((await smi(['--query-gpu=cuda_version', '--format=csv'], stateFile)).code).not.toBe(0);
  });

  it('lists GPUs, compute apps and its version', async () => {
    const l = await smi(['-L'], stateFile);
    expect(l.stdout).toMatch(/^GPU 0: NVIDIA H200 \(UUID: GPU-[0-9a-f-]+\)\nGPU 1: /);
    const apps = await smi(
      ['--query-compute-apps=pid,process_name,used_memory', '--format=csv,noheader,nounits'],
      stateFile,
    );
    expect(apps.stdout.trim().split('\n')[0]).toBe(`${process.pid}, servebench-sim, ${p.gpuMemUsedMib}`);
    const v = await smi(['--version'], stateFile);
    expect(v.stdout).toMatch(/DRIVER version\s+: 570\.86\.15/);
    expect(v.stdout).toMatch(/CUDA Version\s+: 12\.8/);
  });

  it('behaves like a machine without a driver when there is no state file', async () => {
    const r = await smi(['-L'], join(dir, 'missing.json'));
    expect(r.code).toBe(9);
    expect(r.stdout).toMatch(/^NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver/);
    expect((await smi(['-L'], null)).code).toBe(9);
  });

  it('loops with -lms until it is terminated, then exits cleanly', async () => {
    const child = spawn(
      process.execPath,
      [SMI, '--query-gpu=index,temperature.gpu', '--format=csv,noheader,nounits', '-lms', '50', '-i', '0'],
      {
        env: { ...process.env, SERVEBENCH_FAKE_GPU_STATE: stateFile },
      },
    );
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    await waitFor(() => out.split('\n').length > 3, 'three loop lines');
    const exit = new Promise<[number | null, NodeJS.Signals | null]>((r) => child.once('exit', (c, s) => r([c, s])));
    child.kill('SIGTERM');
    expect(await exit).toEqual([0, null]);
    for (const line of out.trim().split('\n')) expect(line).toMatch(/^0, \d+$/);
  });
});
