import { parseArgs } from 'node:util';
import { UserError } from '../core/errors.js';
import { readGpuSnapshot, type GpuSnapshot } from '../core/telemetry/gpu-snapshot.js';
import { formatGpuProcess } from '../core/telemetry/nvidia-smi-static.js';
import { telemetryFieldName } from '../core/telemetry/sample-bounds.js';
import { clockRatio, describeThrottleMask } from '../core/telemetry/throttle.js';
import { wrapHelp } from './help-text.js';
import { helpAsked } from './args-error.js';

const HELP = `Usage: servebench gpu [--nvidia-smi PATH] [--dcgm-url URL[,URL...]] [--json]

Lists the GPUs, the processes holding GPU memory, and one telemetry sample per GPU with its
throttle class: the quickest way to see that GPU telemetry works before a run.

Options:
  --nvidia-smi PATH  nvidia-smi to use (default: $SERVEBENCH_NVIDIA_SMI, else PATH)
  --dcgm-url URLS    read DCGM exporters' /metrics instead (remote GPUs), one URL per node, comma-separated or repeated
  --json             print the snapshot as JSON`;

const num = (v: number | null, unit: string, digits = 0) => (v === null ? '?' : `${v.toFixed(digits)}${unit}`);

/** Renders a snapshot for people. */
export function formatGpuSnapshot(s: GpuSnapshot): string {
  const lines: string[] = [];
  lines.push(`GPU telemetry via ${s.source} (${s.from})`);
  for (const g of s.gpus) {
    const facts = [
      g.name ?? 'unknown GPU',
      g.driver ? `driver ${g.driver}` : null,
      g.cudaVersion ? `CUDA ${g.cudaVersion}` : null,
      g.memoryMiB !== null ? `${g.memoryMiB} MiB` : null,
      g.powerLimitW !== null ? `power limit ${num(g.powerLimitW, ' W')}` : null,
      g.maxSmClockMhz !== null ? `max SM clock ${g.maxSmClockMhz} MHz` : null,
    ].filter(Boolean);
    lines.push(`  GPU ${g.index}${g.node ? ` (on ${g.node})` : ''}: ${facts.join(', ')}`);
    if (g.rejected?.length) lines.push(`    impossible values left out: ${g.rejected.join(', ')}`);
  }
  for (const reason of s.unread ?? []) lines.push(`  not read: ${reason}`);
  if (s.processes === null) lines.push('Processes holding GPU memory: not available from this source');
  else if (s.processes.length === 0) lines.push('Processes holding GPU memory: none');
  else {
    lines.push(`Processes holding GPU memory (they distort a benchmark): ${s.processes.length}`);
    for (const p of s.processes) lines.push(`  ${formatGpuProcess(p)}`);
  }
  lines.push('Sample:');
  for (const x of s.samples) {
    const ratio = clockRatio(x);
    const parts = [
      `SM ${num(x.smClockMhz, '')}/${num(x.maxSmClockMhz, ' MHz')}${ratio !== null ? ` (${Math.round(ratio * 100)} %)` : ''}`,
      `${num(x.tempC, ' °C')}${x.memTempC !== null ? ` (memory ${num(x.memTempC, ' °C')})` : ''}`,
      `${num(x.powerW, ' W', 1)}${x.powerLimitW !== null ? ` of ${num(x.powerLimitW, ' W')}` : ''}`,
      `util ${num(x.utilPct, ' %')}`,
      x.memUsedMiB !== null ? `mem ${x.memUsedMiB}/${num(x.memTotalMiB, ' MiB')}` : null,
      x.pstate,
      `throttle ${x.class}${x.throttleMask !== null ? ` (0x${x.throttleMask.toString(16)}: ${describeThrottleMask(x.throttleMask)})` : ''}`,
    ].filter(Boolean);
    lines.push(`  GPU ${x.gpu}: ${parts.join(', ')}`);
    const rejected = Object.entries(x.rejected ?? {});
    if (rejected.length > 0) {
      const named = rejected.map(([field, value]) => `${telemetryFieldName('gpu', field)} ${value}`).join(', ');
      lines.push(`    impossible values left out (shown as ?): ${named}`);
    }
  }
  if (s.droppedFields.length)
    lines.push(`Fields this driver does not report (left out): ${s.droppedFields.join(', ')}`);
  return lines.join('\n');
}

/** `servebench gpu`: GPUs, processes and one sample; exit 2 with one line naming the fix when there is no GPU source. */
export async function gpuCommand(argv: string[]): Promise<number> {
  let values: { 'nvidia-smi'?: string; 'dcgm-url'?: string[]; json?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        'nvidia-smi': { type: 'string' },
        'dcgm-url': { type: 'string', multiple: true },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    if (helpAsked(argv)) {
      console.log(wrapHelp(HELP));
      return 0;
    }
    throw new UserError(`${error instanceof Error ? error.message : String(error)}; run 'servebench gpu --help'`);
  }
  if (values.help) {
    console.log(wrapHelp(HELP));
    return 0;
  }
  // nvidia-smi without persistence mode can take seconds to start, a hung one takes its whole time-out: say so.
  const slow = setTimeout(() => process.stderr.write('waiting for the GPU source to answer…\n'), 3_000);
  const result = await readGpuSnapshot({
    ...(values['nvidia-smi'] ? { nvidiaSmiPath: values['nvidia-smi'] } : {}),
    ...(values['dcgm-url'] ? { dcgmUrl: values['dcgm-url'].join(',') } : {}),
  }).finally(() => clearTimeout(slow));
  if (!result.ok) throw new UserError(result.reason);
  console.log(values.json ? JSON.stringify(result.snapshot, null, 2) : formatGpuSnapshot(result.snapshot));
  return 0;
}
