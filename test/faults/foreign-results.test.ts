import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { isUserError } from '../../src/core/errors.js';
import { compareSeries } from '../../src/core/report/compare/compare.js';
import { readSiblingText } from '../../src/core/report/compare/foreign-input.js';
import { compareHtml } from '../../src/core/report/compare/html.js';
import { compareMarkdown } from '../../src/core/report/compare/markdown.js';
import { readCompareInput, readCompareInputs } from '../../src/core/report/compare/read-input.js';
import { compareText } from '../../src/core/report/compare/text.js';
import { fixtureDir } from '../core/report/fixtures.js';

// Another tool's result file is as foreign as a server's answer: hostile text, numbers no measurement gives,
// expanding YAML, devices and deep nesting must each end in one line or a named omission, never a hang or a trace.

const root = new URL('../fixtures/', import.meta.url).pathname;
const AIPERF_JSON = join(
  root,
  'aiperf',
  'servebench_sim-llama-8b-openai-chat-concurrency4',
  'profile_export_aiperf.json',
);
const IP_STAGE = join(root, 'inference-perf', 'reports-20261201-104000', 'stage_1_lifecycle_metrics.json');
const LLMD = join(root, 'llmd-benchmark', 'benchmark_report_v0.2,_stage_1_lifecycle_metrics.json.yaml');

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'sb-faults-foreign-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** The one line a refusal prints, or a failure naming what escaped instead. */
async function refusal(path: string): Promise<string> {
  try {
    await readCompareInput(path);
  } catch (error) {
    expect(isUserError(error), String(error)).toBe(true);
    const line = (error as Error).message;
    expect(line.split('\n')).toHaveLength(1);
    return line;
  }
  throw new Error(`${path} was read`);
}

describe('results from other tools', () => {
  it('a model name that is HTML, Markdown and terminal commands reaches no output unescaped', async () => {
    const raw = JSON.parse(await readFile(AIPERF_JSON, 'utf8'));
    const evil = '<img src=x onerror=alert(1)>|**x**\u001b]8;;http://e.vil\u0007\u001b[2J\u202e';
    raw.input_config.endpoint.model_names = [evil];
    const dir = join(tmp, `m-openai-chat-concurrency4`);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'profile_export_aiperf.json'), JSON.stringify(raw));
    const c = compareSeries(await readCompareInputs([fixtureDir('closed'), dir]), { replicates: 50 });
    const html = compareHtml(c, new Date(0));
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;img');
    const md = compareMarkdown(c);
    expect(md).not.toMatch(/\| <img src=x onerror=alert\(1\)>\|/);
    const text = compareText(c);
    for (const control of ['\u001b', '\u0007', '\u202e']) expect(text).not.toContain(control);
  });

  it('YAML whose aliases would expand a small file into an enormous one is refused in one line', async () => {
    const bomb = join(tmp, 'benchmark_report_bomb.yaml');
    const levels = ['a: &a [x,x,x,x,x,x,x,x,x,x]'];
    for (const [name, prev] of [
      ['b', 'a'],
      ['c', 'b'],
      ['d', 'c'],
      ['e', 'd'],
      ['f', 'e'],
    ])
      levels.push(`${name}: &${name} [${Array(10).fill(`*${prev}`).join(',')}]`);
    await writeFile(bomb, `version: "0.2"\nrun: {uid: x}\nresults: {}\n${levels.join('\n')}\n`);
    expect(await refusal(bomb)).toMatch(/is not YAML compare reads: Excessive alias count/);
  });

  it('a stage report that is a link to /dev/zero is refused, not read forever', async () => {
    const dir = join(tmp, 'reports-zero');
    await mkdir(dir);
    await symlink('/dev/zero', join(dir, 'stage_0_lifecycle_metrics.json'));
    expect(await refusal(dir)).toMatch(/stage_0_lifecycle_metrics\.json cannot be read: check the reports folder/);
  });

  it("a folder's files share one byte budget: the file that would pass it is refused in one line", async () => {
    const budget = { bytesLeft: 10_000 };
    expect(await readSiblingText(IP_STAGE, budget)).toContain('load_summary');
    expect(budget.bytesLeft).toBeLessThan(10_000);
    await expect(readSiblingText(IP_STAGE, budget)).rejects.toThrow(/takes its folder past 256 MiB.*give fewer files/);
  });

  it('JSON nested 200,000 deep is no format compare knows: one line', async () => {
    const deep = join(tmp, 'deep.json');
    await writeFile(deep, '['.repeat(200_000) + ']'.repeat(200_000));
    expect(await refusal(deep)).toMatch(/compare/);
  });

  it('a number past the largest double (Infinity) and a negative rate are named and left out, never printed', async () => {
    const raw = JSON.parse(await readFile(IP_STAGE, 'utf8'));
    raw.successes.latency.request_latency.median = 123456789;
    const huge = join(tmp, 'stage_1_huge.json');
    await writeFile(huge, JSON.stringify(raw).replace('123456789', '1e400'));
    const s = (await readCompareInput(huge))[0]!;
    expect(s.levels[0]!.figures.e2eP50).toBeNull();
    expect(s.notes.join(' ')).toMatch(/was Infinity, which no measurement gives: left out/);
    expect(compareMarkdown(compareSeries([s]))).not.toContain('Infinity ms');
    const negative = join(tmp, 'stage_1_negative.json');
    raw.load_summary.concurrency = -4;
    await writeFile(negative, JSON.stringify(raw));
    expect(await refusal(negative)).toMatch(/holds no level at a load above zero/);
  });

  it('a Benchmark Report with a statistic of the wrong type is refused with its path', async () => {
    const report = parse(await readFile(LLMD, 'utf8'));
    report.results.request_performance.aggregate.latency.time_to_first_token.units = ['s'];
    const bad = join(tmp, 'benchmark_report_badunits.yaml');
    await writeFile(bad, stringify(report));
    expect(await refusal(bad)).toMatch(
      /is a Benchmark Report v0\.2 that compare cannot read \(results\.request_performance\.aggregate\.latency\.time_to_first_token\.units: /,
    );
  });
});
