import { existsSync, mkdirSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServebenchService } from '../../src/core/api.js';
import { defaultBenchmarkDeps } from '../../src/core/default-deps.js';
import type { UiServer } from '../../src/core/ui-server/index.js';
import type { RunRecord } from '../../src/shared/run-record.js';
import { CHROMIUM } from './chromium.js';
import { openAppPage } from './app-page.js';
import { ensureBuilt } from './renderer-build.js';

const root = resolve(import.meta.dirname, '..', '..');
const shots = join(root, 'test-results');
const fixtures = join(root, 'test', 'fixtures', 'runs');
const CLOSED = '20261201T103727Z-closed';
const OPEN = '20261201T105933Z-open';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.warn(`skipping the run-messages e2e test: ${CHROMIUM} is absent (apt-get install chromium)`);

describe.skipIf(!haveChromium)('the messages a run kept, in the results view (headless Chromium)', () => {
  let out: string;
  let server: UiServer;
  let browser: Browser;
  let page: Page;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    ensureBuilt(root);
    mkdirSync(shots, { recursive: true });
    out = await mkdtemp(join(tmpdir(), 'sb-e2e-msgs-'));
    await cp(join(fixtures, 'open'), join(out, OPEN), { recursive: true });
    // The closed-loop fixture run, given the messages a run on a machine without nvidia-smi keeps.
    await cp(join(fixtures, 'closed'), join(out, CLOSED), { recursive: true });
    const file = join(out, CLOSED, 'run.json');
    const record = JSON.parse(await readFile(file, 'utf8')) as RunRecord;
    const start = Date.parse(record.startedAt) - Date.parse(record.clock.originWall);
    record.messages = [
      { atMs: start + 400, severity: 'info', text: 'server has no /tokenize: prompt length calibrated from usage' },
      { atMs: start + 900, severity: 'warn', text: 'GPU telemetry unavailable: nvidia-smi not found on PATH' },
      {
        atMs: start + 75_000,
        severity: 'warn',
        text: 'a <b>multi-turn</b> history could not be counted',
        count: 4,
        levelIndex: 1,
      },
      { atMs: start + 80_000, severity: 'error', text: 'the server answered 503 once' },
    ];
    await writeFile(file, JSON.stringify(record, null, 2));
    const service = createServebenchService({ outDir: out, deps: defaultBenchmarkDeps() });
    ({ server, browser, page } = await openAppPage(service, consoleErrors, { viewport: { width: 1280, height: 860 } }));
  }, 300_000); // above the bounds of the two builds ensureBuilt may run

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (out) await rm(out, { recursive: true, force: true });
  });

  it('lists them under the checks: severity, time since the start, level, text as text', async () => {
    await page.goto(server.url);
    await page.getByTestId('runs-list').getByText('closed', { exact: true }).click();
    const results = page.getByTestId('results-view');
    const list = results.getByTestId('run-messages');
    await list.waitFor();
    const items = list.getByTestId('run-message');
    expect(await items.count()).toBe(4);
    expect(await items.evaluateAll((els) => els.map((e) => e.getAttribute('data-severity')))).toEqual([
      'info',
      'warn',
      'warn',
      'error',
    ]);
    expect((await items.nth(1).innerText()).replace(/\s+/g, ' ')).toBe(
      'warn 0:00 GPU telemetry unavailable: nvidia-smi not found on PATH',
    );
    // A message is text, never markup; the level it was said during is named.
    expect((await items.nth(2).innerText()).replace(/\s+/g, ' ')).toBe(
      'warn 1:15 c=4 32/16 a <b>multi-turn</b> history could not be counted ×4',
    );
    expect(await list.locator('b').count()).toBe(0);
    await results.getByRole('heading', { name: 'Messages during the run' }).scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, 'app-results-messages.png') });
    expect(consoleErrors).toEqual([]);
  });

  it('shows no messages list for a run that kept none', async () => {
    await page.getByTestId('runs-list').getByText('open', { exact: true }).click();
    const results = page.getByTestId('results-view');
    await results.getByTestId('checks').waitFor();
    await results
      .getByText(/^open$/)
      .first()
      .waitFor();
    expect(await results.getByTestId('run-messages').count()).toBe(0);
    expect(await results.getByRole('heading', { name: 'Messages during the run' }).count()).toBe(0);
    expect(consoleErrors).toEqual([]);
  });
});
