// A stand-in for servebench's CLI script as the sim adapter runs it: `node engine-sim-cli.mjs sim --mimic vllm ...`.
// It records its argv and behaves like the fake vLLM (engine-core.mjs), so the sim adapter's lifecycle is tested
// without depending on the real simulator.
import { runEngine } from './engine-core.mjs';

const [command, ...rest] = process.argv.slice(2);
if (command !== 'sim') {
  console.error(`engine-sim-cli: unknown command ${command}`);
  process.exit(2);
}
const mimic = rest[rest.indexOf('--mimic') + 1] ?? 'vllm';
await runEngine(mimic === 'sglang' ? 'sglang' : 'vllm', rest, { recordKind: 'sim' });
