import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServebenchService } from '../../src/core/api.js';
import { defaultBenchmarkDeps } from '../../src/core/default-deps.js';
import type { UiServer } from '../../src/core/ui-server/index.js';
import { CHROMIUM, collectErrors } from './chromium.js';
import { openAppPage } from './app-page.js';
import { ensureBuilt } from './renderer-build.js';

const root = resolve(import.meta.dirname, '..', '..');
const shots = join(root, 'test-results');
const haveChromium = existsSync(CHROMIUM);
// Waits end on what the page shows; these only bound them, generously, for a loaded or slow machine.
const RUN_TEST_MS = 300_000;
if (!haveChromium) console.warn(`skipping the workload e2e test: ${CHROMIUM} is absent (apt-get install chromium)`);

/** Each workload: its button, the inputs it shows (by flag) and a word of its hint. */
const MODES = [
  { id: 'synthetic', fields: [], hint: /exactly Input tokens/ },
  { id: 'file', fields: ['prompts', 'prompt-lengths', 'output-lengths'], hint: /lengths from file/ },
  { id: 'shared-prefix', fields: ['prefix-groups', 'prefix-len'], hint: /i mod N/ },
  { id: 'multi-turn', fields: ['turns', 'think-time-ms'], hint: /Concurrency counts\s+conversations/ },
  { id: 'trace', fields: ['trace', 'trace-speed'], hint: /Mooncake trace/ },
] as const;
const ALL_FIELDS = MODES.flatMap((m) => m.fields);

/** Waits until the input `testId` holds `value` (the answer of an asynchronous call). */
async function filled(page: Page, testId: string, value: string): Promise<void> {
  await page.waitForFunction(`document.querySelector('[data-testid="${testId}"]')?.value === ${JSON.stringify(value)}`);
}

/**
 * Runs in the page before the app (page script, so plain JS): a stand-in for Electron's preload bridge, every call
 * over the UI server's socket but pickFile, answered as main's open dialog would (path, path, then cancelled).
 */
const DESKTOP_BRIDGE = `(() => {
  const token = new URLSearchParams(location.search).get('token') ?? '';
  const ws = new WebSocket('ws://' + location.host + '/rpc?token=' + token);
  const open = new Promise((resolve) => ws.addEventListener('open', resolve));
  const waiting = new Map();
  const listeners = new Set();
  ws.addEventListener('message', (m) => {
    const data = JSON.parse(String(m.data));
    if (data.event !== undefined) listeners.forEach((l) => l(data.event));
    const w = waiting.get(data.id);
    if (!w) return;
    waiting.delete(data.id);
    if (data.error !== undefined) w.reject(new Error(data.error));
    else w.resolve(data.result);
  });
  const picks = ['/home/me/data/sharegpt.json', '/home/me/traces/mooncake.jsonl', null];
  const pickCalls = [];
  let next = 1;
  window.pickCalls = pickCalls;
  window.servebench = {
    async call(method, args) {
      if (method === 'pickFile') {
        pickCalls.push(args[0]);
        return { path: picks.shift() ?? null };
      }
      await open;
      const id = next++;
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        ws.send(JSON.stringify({ id, method, args }));
      });
    },
    onEvent(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
})();`;

describe.skipIf(!haveChromium)('New-run form: the Workload section in headless Chromium (simulator)', () => {
  let out: string;
  let server: UiServer;
  let browser: Browser;
  let page: Page;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    ensureBuilt(root);
    mkdirSync(shots, { recursive: true });
    out = await mkdtemp(join(tmpdir(), 'sb-e2e-workload-'));
    const service = createServebenchService({ outDir: out, deps: defaultBenchmarkDeps() });
    ({ server, browser, page } = await openAppPage(service, consoleErrors, { viewport: { width: 1280, height: 720 } }));
  }, 300_000); // above the bounds of the two builds ensureBuilt may run

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (out) await rm(out, { recursive: true, force: true });
  });

  const section = () => page.getByTestId('workload-section');
  const pick = (id: string) => page.getByTestId(`workload-${id}`).check({ force: true });

  it('shows one workload at a time: its fields and hint only, fixed lengths first', async () => {
    await page.goto(server.url);
    await page.getByTestId('new-run-form').waitFor();
    expect(await page.getByTestId('workload-synthetic').isChecked()).toBe(true);
    for (const mode of MODES) {
      await pick(mode.id);
      expect(await section().getByTestId('workload-hint').textContent()).toMatch(mode.hint);
      for (const flag of ALL_FIELDS) {
        expect(await page.getByTestId(flag).count(), `${mode.id}: ${flag}`).toBe(
          (mode.fields as readonly string[]).includes(flag) ? 1 : 0,
        );
      }
      await section().scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(shots, `workload-${mode.id}.png`) });
    }
    expect(consoleErrors).toEqual([]);
  });

  it('in a browser: a path input with the note that the path is on the machine running servebench, no Browse…', async () => {
    await pick('file');
    await section().getByTestId('path-note').waitFor();
    expect(await section().getByTestId('path-note').textContent()).toMatch(/machine running servebench/);
    expect(await page.getByTestId('browse-prompts').count()).toBe(0);
    await pick('trace');
    await section().getByTestId('path-note').waitFor();
  });

  it('trace replay disables the Sweep fields the trace does not use, each noted "from the trace"; the rest stay', async () => {
    const unused = ['concurrency', 'rate', 'input-len', 'output-len'];
    const used = ['rounds', 'requests-per-round', 'warmup'];
    const sweep = page.locator('fieldset', { has: page.getByTestId('concurrency') });
    // Rate and Warm-up sit under "More load settings".
    await sweep.locator('details.more > summary').click();
    await pick('trace');
    for (const flag of unused) expect(await page.getByTestId(flag).isDisabled(), flag).toBe(true);
    for (const flag of used) expect(await page.getByTestId(flag).isEditable(), flag).toBe(true);
    const notes = sweep.getByTestId('from-workload');
    expect(await notes.allTextContents()).toEqual(unused.map(() => 'from the trace'));
    expect(await page.getByTestId('concurrency').locator('..').getByTestId('from-workload').count()).toBe(1);
    await sweep.scrollIntoViewIfNeeded();
    await sweep.screenshot({ path: join(shots, 'workload-trace-sweep.png') });
    // Another workload: every Sweep field editable again, no note.
    await pick('synthetic');
    for (const flag of [...unused, ...used]) expect(await page.getByTestId(flag).isEditable(), flag).toBe(true);
    expect(await notes.count()).toBe(0);
    await sweep.locator('details.more > summary').click();
    expect(consoleErrors).toEqual([]);
  });

  it('switching clears the other workloads: a prompt file typed, then shared prefix, then back: empty', async () => {
    await pick('file');
    await page.getByTestId('prompts').fill('/data/prompts.jsonl');
    await page.getByTestId('output-lengths').selectOption('file');
    await pick('shared-prefix');
    await page.getByTestId('prefix-groups').fill('4');
    await pick('file');
    expect(await page.getByTestId('prompts').inputValue()).toBe('');
    expect(await page.getByTestId('output-lengths').inputValue()).toBe('');
    await pick('shared-prefix');
    expect(await page.getByTestId('prefix-groups').inputValue()).toBe('');
  });

  it("the form's own line for a missing field, then the core's refusal, beside the section", async () => {
    await page.getByTestId('concurrency').fill('1');
    await page.getByTestId('input-len').fill('512');
    await pick('shared-prefix');
    await page.getByTestId('prefix-groups').fill('4');
    await page.getByTestId('start').click();
    const line = section().getByTestId('workload-error');
    await line.waitFor();
    expect(await line.textContent()).toMatch(/shared prefix length in tokens/);
    // The core's workloadProblem: the prefix must leave each request a unique part.
    await page.getByTestId('prefix-len').fill('600');
    await page.getByTestId('start').click();
    await section()
      .getByText(/Prefix length 600 must be shorter than Input tokens 512/)
      .waitFor();
    // The app names the fields by their labels where the command line names the flags.
    expect(await page.getByTestId('form-error').textContent()).toMatch(/Prefix length 600/);
    expect(await page.getByTestId('form-error').textContent()).not.toMatch(/--/);
    await section().scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, 'workload-error.png') });
    // Another workload: the refusal was about the one left, so it goes.
    await pick('file');
    expect(await section().getByTestId('workload-error').count()).toBe(0);
    // A prompt file that is not there: the core's line names it, beside the section.
    await page.getByTestId('prompts').fill(join(out, 'missing.jsonl'));
    await page.getByTestId('start').click();
    await section()
      .getByText(/cannot read Prompt file .*missing\.jsonl: no such file/)
      .waitFor();
    expect(consoleErrors).toEqual([]);
  });

  it('dark: the section in the dark theme', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    await pick('trace');
    await section().scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, 'workload-trace-dark.png') });
    await pick('multi-turn');
    await page.screenshot({ path: join(shots, 'workload-multi-turn-dark.png') });
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('in the desktop app: Browse… asks pickFile for the file and fills in the path it answers', async () => {
    // The dialog itself is main's, tested in test/main/pick-file.test.ts.
    const desktop = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    collectErrors(desktop, consoleErrors);
    await desktop.addInitScript({ content: DESKTOP_BRIDGE });
    await desktop.goto(server.url);
    await desktop.getByTestId('new-run-form').waitFor();
    await desktop.getByTestId('workload-file').check({ force: true });
    await desktop.getByTestId('browse-prompts').click();
    await filled(desktop, 'prompts', '/home/me/data/sharegpt.json');
    expect(await desktop.getByTestId('path-note').count()).toBe(0);
    await desktop.getByTestId('workload-section').scrollIntoViewIfNeeded();
    await desktop.screenshot({ path: join(shots, 'workload-file-desktop.png') });
    await desktop.getByTestId('workload-trace').check({ force: true });
    await desktop.getByTestId('browse-trace').click();
    await filled(desktop, 'trace', '/home/me/traces/mooncake.jsonl');
    // Cancelled: the path there stays.
    await desktop.getByTestId('browse-trace').click();
    await desktop.waitForFunction('window.pickCalls.length === 3');
    expect(await desktop.getByTestId('trace').inputValue()).toBe('/home/me/traces/mooncake.jsonl');
    expect(await desktop.getByTestId('trace').inputValue()).toBe('/home/me/traces/mooncake.jsonl');
    expect(await desktop.evaluate<unknown[]>('window.pickCalls')).toEqual([
      { purpose: 'prompts' },
      { purpose: 'trace' },
      { purpose: 'trace' },
    ]);
    await desktop.close();
    expect(consoleErrors).toEqual([]);
  });

  it('runs a tiny multi-turn sweep on the simulator, to its results', { timeout: RUN_TEST_MS }, async () => {
    await page.getByTestId('engine-sim').check({ force: true });
    await pick('multi-turn');
    await page.getByTestId('turns').fill('2');
    await page.getByTestId('concurrency').fill('1,2');
    await page.getByTestId('input-len').fill('32');
    await page.getByTestId('output-len').fill('16');
    await page.getByTestId('rounds').fill('1');
    // A tiny sweep: at least concurrency × turns requests a round, whole conversations.
    await page.getByTestId('requests-per-round').fill('8');
    await page.getByTestId('warmup').fill('2');
    await page.getByTestId('label').fill('e2e-multi-turn');
    await page.getByTestId('start').click();
    const results = page.getByTestId('results-view');
    await results.getByTestId('results-table').waitFor();
    const rows = results.getByTestId('results-row');
    expect(await rows.count()).toBe(2);
    expect((await rows.nth(0).locator('td').first().textContent())?.trim()).toBe('1');
    expect((await rows.nth(1).locator('td').first().textContent())?.trim()).toBe('2');
    await results.getByText('TTFT per conversation turn').waitFor();
    await page.screenshot({ path: join(shots, 'workload-multi-turn-results.png') });
    await page.screenshot({ path: join(shots, 'workload-multi-turn-results-full.png'), fullPage: true });
    expect(consoleErrors).toEqual([]);
  });
});
