import { describe, expect, it } from 'vitest';
import { createMonoClock } from '../../../src/core/clock.js';
import { gpuSamplesFromDcgm, startDcgmSource } from '../../../src/core/telemetry/dcgm-source.js';
import { parsePrometheusText } from '../../../src/core/telemetry/prometheus-parser.js';
import type { GpuSample } from '../../../src/shared/telemetry.js';
import { countdown } from './helpers.js';

const L0 =
  'gpu="0",UUID="GPU-886520a3-f4c4-4d1c-b5cc-655ca8b02758",pci_bus_id="00000000:07:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="node1",DCGM_FI_DRIVER_VERSION="535.129.03"';
const L1 =
  'gpu="1",UUID="GPU-1b2c",pci_bus_id="00000000:0F:00.0",device="nvidia1",modelName="NVIDIA H100 80GB HBM3",Hostname="node1",DCGM_FI_DRIVER_VERSION="535.129.03"';

const PAGE = `# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).
# TYPE DCGM_FI_DEV_SM_CLOCK gauge
DCGM_FI_DEV_SM_CLOCK{${L0}} 1980
DCGM_FI_DEV_SM_CLOCK{${L1}} 1530
# TYPE DCGM_FI_DEV_MEM_CLOCK gauge
DCGM_FI_DEV_MEM_CLOCK{${L0}} 2619
# TYPE DCGM_FI_DEV_MEMORY_TEMP gauge
DCGM_FI_DEV_MEMORY_TEMP{${L0}} 61
DCGM_FI_DEV_MEMORY_TEMP{${L1}} 0
# TYPE DCGM_FI_DEV_GPU_TEMP gauge
DCGM_FI_DEV_GPU_TEMP{${L0}} 55
DCGM_FI_DEV_GPU_TEMP{${L1}} 87
# TYPE DCGM_FI_DEV_POWER_USAGE gauge
DCGM_FI_DEV_POWER_USAGE{${L0}} 612.345000
DCGM_FI_DEV_POWER_USAGE{${L1}} 480.5
# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{${L0}} 8812345678
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{${L0}} 100
DCGM_FI_DEV_GPU_UTIL{${L1}} 99
# TYPE DCGM_FI_DEV_FB_FREE gauge
DCGM_FI_DEV_FB_FREE{${L0}} 4000
# TYPE DCGM_FI_DEV_FB_USED gauge
DCGM_FI_DEV_FB_USED{${L0}} 77000
# TYPE DCGM_FI_DEV_FB_RESERVED gauge
DCGM_FI_DEV_FB_RESERVED{${L0}} 559
# TYPE DCGM_FI_DEV_CLOCK_THROTTLE_REASONS gauge
DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{${L0}} 0
DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{${L1}} 96
# TYPE DCGM_FI_DEV_PSTATE gauge
DCGM_FI_DEV_PSTATE{${L0}} 0
`;

describe('DCGM exporter source', () => {
  it('maps each gpu label to a GpuSample', () => {
    const samples = gpuSamplesFromDcgm(parsePrometheusText(PAGE), 42);
    expect(samples).toHaveLength(2);
    expect(samples[0]).toEqual({
      tMs: 42,
      gpu: 0,
      smClockMhz: 1980,
      maxSmClockMhz: null,
      memClockMhz: 2619,
      tempC: 55,
      memTempC: 61,
      powerW: 612.345,
      powerLimitW: null,
      utilPct: 100,
      memUsedMiB: 77000,
      memTotalMiB: 81559,
      pstate: 'P0',
      throttleMask: 0,
      class: 'full-speed',
    });
    expect(samples[1]).toMatchObject({
      gpu: 1,
      tempC: 87,
      memTempC: null,
      throttleMask: 96,
      class: 'thermal',
      memTotalMiB: null,
    });
  });

  it('reads the newer clocks-event name and leaves the mask unknown when neither is exported', () => {
    const newer = gpuSamplesFromDcgm(
      parsePrometheusText(`DCGM_FI_DEV_CLOCKS_EVENT_REASONS{gpu="0"} 4\nDCGM_FI_DEV_SM_CLOCK{gpu="0"} 1700`),
      0,
    );
    expect(newer[0]).toMatchObject({ throttleMask: 4, class: 'power-cap' });
    const none = gpuSamplesFromDcgm(parsePrometheusText(`DCGM_FI_DEV_SM_CLOCK{gpu="0"} 1700`), 0);
    expect(none[0]).toMatchObject({ throttleMask: null, class: 'unknown' });
  });

  it('polls the URL as a GPU source, and reports an unreachable exporter in one line', async () => {
    const clock = createMonoClock();
    const seen = countdown<GpuSample>(4);
    const ok = startDcgmSource({
      url: 'http://dcgm:9400/metrics',
      clock,
      intervalMs: 5,
      get: async () => ({ status: 200, body: PAGE }),
      onSample: seen.add,
    });
    expect(await ok.firstScrape).toEqual({ ok: true });
    const samples = await seen.done;
    await ok.stop();
    expect(samples.map((s) => s.gpu)).toEqual([0, 1, 0, 1]);

    const down = startDcgmSource({
      url: 'http://dcgm:9400/metrics',
      clock,
      intervalMs: 5,
      get: async () => {
        throw Object.assign(new Error('getaddrinfo ENOTFOUND dcgm'), { code: 'ENOTFOUND' });
      },
      onSample: () => undefined,
    });
    const first = await down.firstScrape;
    await down.stop();
    expect(first).toEqual({
      ok: false,
      reason: 'DCGM exporter at http://dcgm:9400/metrics gave no GPU metrics (ENOTFOUND); check --dcgm-url',
    });
  });
});
