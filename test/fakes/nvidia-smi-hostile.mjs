#!/usr/bin/env node
// A hostile nvidia-smi for one GPU. FAKE_NVSMI_HOSTILE chooses how it misbehaves:
//   hang         every call hangs for ever and ignores SIGTERM (a GPU fallen off the bus, a stuck driver)
//   hang-loop    queries answer; the -lms loop prints one frame, then nothing (and ignores SIGTERM)
//   flood-loop   queries answer; the -lms loop prints valid rows as fast as the pipe takes them, ignoring SIGTERM
//   flood-query  every query prints without end and without a newline, ignoring SIGTERM
//   impossible   answers like a driver, with values no GPU has (-273 °C, 1e308 °C, -5 MHz, a mask of all ones)
//   impossible-facts  honest samples, but static facts no GPU has (a 1e308 W limit, -1 MiB, a 0 MHz max clock)
// FAKE_NVSMI_LOG: append each argv as a JSON line (and the pid), so a test can see what was called and kill-check it.
import { appendFileSync } from 'node:fs';

const mode = process.env.FAKE_NVSMI_HOSTILE || 'hang';
const args = process.argv.slice(2);
if (process.env.FAKE_NVSMI_LOG)
  appendFileSync(process.env.FAKE_NVSMI_LOG, `${JSON.stringify({ pid: process.pid, args })}\n`);

const ignoreSignals = () => {
  process.on('SIGTERM', () => undefined);
  process.on('SIGINT', () => undefined);
};
const forever = () => setInterval(() => undefined, 1 << 30);

const HONEST = {
  timestamp: '2024/05/14 10:12:03.000',
  index: '0',
  'clocks.sm': '1980',
  'clocks.max.sm': '1980',
  'clocks.mem': '2619',
  'temperature.gpu': '60',
  'temperature.memory': '70',
  'power.draw': '500.00',
  'enforced.power.limit': '700.00',
  'power.limit': '700.00',
  'utilization.gpu': '100',
  'memory.used': '70000',
  'memory.total': '81559',
  pstate: 'P0',
  'clocks_throttle_reasons.active': '0x0000000000000000',
  name: 'NVIDIA H100 80GB HBM3',
  uuid: 'GPU-00000000-0000-0000-0000-000000000000',
  driver_version: '535.104.05',
  'pci.bus_id': '00000000:18:00.0',
  'clocks.max.mem': '2619',
};
const IMPOSSIBLE = {
  ...HONEST,
  'clocks.sm': '-5',
  'temperature.gpu': '1e308',
  'temperature.memory': '-273',
  'power.draw': 'nan',
  'utilization.gpu': '250',
  'clocks_throttle_reasons.active': '0xFFFFFFFFFFFFFFFF',
};
const IMPOSSIBLE_FACTS = {
  ...HONEST,
  'enforced.power.limit': '1e308',
  'memory.total': '-1',
  'clocks.max.sm': '0',
  'clocks.max.mem': '1e9',
};
const values = { impossible: IMPOSSIBLE, 'impossible-facts': IMPOSSIBLE_FACTS }[mode] ?? HONEST;

const opt = (flag) => {
  const eq = args.find((a) => a.startsWith(`${flag}=`));
  if (eq) return eq.slice(flag.length + 1);
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
};
const write = (text) => new Promise((resolve) => process.stdout.write(text, resolve));

if (mode === 'hang') {
  ignoreSignals();
  forever();
} else if (mode === 'flood-query') {
  ignoreSignals();
  const junk = 'x'.repeat(64 << 10);
  const pump = () => {
    while (process.stdout.write(junk));
    process.stdout.once('drain', pump);
  };
  pump();
} else if (args.length === 0) {
  await write('| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |\n');
} else if (opt('--query-compute-apps') !== undefined) {
  await write('');
} else {
  const query = opt('--query-gpu');
  if (query === undefined) {
    process.stderr.write('hostile nvidia-smi: unsupported arguments\n');
    process.exit(2);
  }
  const fields = query.split(',').map((f) => f.trim());
  const bad = fields.find((f) => !(f in values));
  if (bad) {
    await write(`Field "${bad}" is not a valid field to query.\n\n`);
    process.exit(2);
  }
  const row = `${fields.map((f) => values[f]).join(', ')}\n`;
  const loop = opt('-lms');
  if (loop === undefined) {
    await write(row);
  } else if (mode === 'hang-loop') {
    ignoreSignals();
    await write(row);
    forever();
  } else if (mode === 'flood-loop') {
    ignoreSignals();
    const block = row.repeat(512);
    const pump = () => {
      while (process.stdout.write(block));
      process.stdout.once('drain', pump);
    };
    pump();
  } else {
    process.on('SIGTERM', () => process.exit(0));
    for (;;) {
      await write(row);
      await new Promise((resolve) => setTimeout(resolve, Number(loop)));
    }
  }
}
