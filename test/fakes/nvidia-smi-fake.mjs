#!/usr/bin/env node
// A fake nvidia-smi that replays recorded outputs from test/fixtures/nvidia-smi/<scenario>.
// Env: FAKE_NVSMI_SCENARIO (name or path; default h100-535), FAKE_NVSMI_EXIT_AFTER (the -lms loop
// exits with code 1 after N frames), FAKE_NVSMI_LOG (append each argv as a JSON line).
// It answers any --query-gpu field list the scenario's driver accepts, refuses the others the way
// nvidia-smi does (first unknown field, exit 2), and loops over the recorded frames with -lms.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const name = process.env.FAKE_NVSMI_SCENARIO || 'h100-535';
const dir = isAbsolute(name) ? name : join(here, '..', 'fixtures', 'nvidia-smi', name);
const scenario = JSON.parse(readFileSync(join(dir, 'scenario.json'), 'utf8'));
const args = process.argv.slice(2);
if (process.env.FAKE_NVSMI_LOG) appendFileSync(process.env.FAKE_NVSMI_LOG, `${JSON.stringify(args)}\n`);

const write = (stream, text) => new Promise((resolve) => stream.write(text, resolve));
async function finish(code, text = '', stream = process.stdout) {
  if (text) await write(stream, text);
  process.exit(code);
}

if (scenario.failure) await finish(scenario.failure.exitCode, scenario.failure.message);

const opt = (flag) => {
  const eq = args.find((a) => a.startsWith(`${flag}=`));
  if (eq) return eq.slice(flag.length + 1);
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
};

if (args.length === 0) await finish(0, readFileSync(join(dir, 'banner.txt'), 'utf8'));

const apps = opt('--query-compute-apps');
if (apps !== undefined) {
  const file = join(dir, 'compute-apps.csv');
  await finish(0, existsSync(file) ? readFileSync(file, 'utf8') : '');
}

const query = opt('--query-gpu');
if (query === undefined) await finish(2, 'fake nvidia-smi: unsupported arguments\n', process.stderr);
const fields = query.split(',').map((f) => f.trim());
const bad = fields.find((f) => !scenario.fields.includes(f));
if (bad) {
  const stream = scenario.refusalStream === 'stderr' ? process.stderr : process.stdout;
  await finish(2, `Field "${bad}" is not a valid field to query.\n\n`, stream);
}

// samples.csv: "# fields: a, b, ..." then one row per GPU per frame.
const [head, ...rows] = readFileSync(join(dir, 'samples.csv'), 'utf8')
  .split('\n')
  .filter((l) => l.trim());
const columns = head
  .replace(/^#\s*fields:\s*/, '')
  .split(',')
  .map((c) => c.trim());
const gpus = scenario.gpus.length;
const frames = [];
for (let i = 0; i + gpus <= rows.length; i += gpus) frames.push(rows.slice(i, i + gpus));
const render = (frame) =>
  frame
    .map((row, g) => {
      const cells = row.split(',').map((c) => c.trim());
      return fields
        .map((f) => {
          const col = columns.indexOf(f) >= 0 ? columns.indexOf(f) : columns.indexOf(scenario.aliases?.[f] ?? '');
          if (col >= 0) return cells[col];
          return scenario.gpus[g][f] ?? scenario.gpus[g][scenario.aliases?.[f]] ?? '[N/A]';
        })
        .join(', ');
    })
    .map((l) => `${l}\n`)
    .join('');

const loopMs = Number(opt('-lms') ?? opt('--loop-ms') ?? NaN);
if (!Number.isFinite(loopMs)) await finish(0, render(frames[0]));

const exitAfter = Number(process.env.FAKE_NVSMI_EXIT_AFTER || Infinity);
process.on('SIGTERM', () => process.exit(0));
for (let k = 0; ; k++) {
  if (k >= exitAfter) await finish(1, 'fake nvidia-smi: GPU lost (exit after frames)\n', process.stderr);
  await write(process.stdout, render(frames[k % frames.length]));
  await new Promise((resolve) => setTimeout(resolve, loopMs));
}
