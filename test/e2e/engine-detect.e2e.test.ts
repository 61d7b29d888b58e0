import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServebenchService } from '../../src/core/api.js';
import type { ServebenchService } from '../../src/core/api.js';
import { defaultBenchmarkDeps } from '../../src/core/default-deps.js';
import type { UiServer } from '../../src/core/ui-server/index.js';
import type { EngineProbeRequest } from '../../src/shared/contract.js';
import { FAKE_PYTHON } from '../core/servers/helpers.js';
import { CHROMIUM } from './chromium.js';
import { openAppPage } from './app-page.js';
import { ensureBuilt } from './renderer-build.js';

const root = resolve(import.meta.dirname, '..', '..');
const shots = join(root, 'test-results');
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium)
  console.warn(`skipping the engine look-up e2e test: ${CHROMIUM} is absent (apt-get install chromium)`);

describe.skipIf(!haveChromium)('the new-run form finds the installed engine (fake python, headless Chromium)', () => {
  let out: string;
  let server: UiServer;
  let browser: Browser;
  let page: Page;
  const asked: EngineProbeRequest[] = [];
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    ensureBuilt(root);
    mkdirSync(shots, { recursive: true });
    out = await mkdtemp(join(tmpdir(), 'sb-e2e-probe-'));
    // The engines' environment: the fake python answers as vLLM 0.11.0 and SGLang 0.11.0.
    const real = createServebenchService({
      outDir: out,
      deps: defaultBenchmarkDeps(),
      env: { ...process.env, FAKE_ENGINE_VERSION: '0.11.0' },
    });
    const service: ServebenchService = {
      ...real,
      probeEngine: (request) => {
        asked.push(request);
        return real.probeEngine(request);
      },
    };
    ({ server, browser, page } = await openAppPage(service, consoleErrors, { viewport: { width: 1280, height: 720 } }));
  }, 300_000); // above the bounds of the two builds ensureBuilt may run

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (out) await rm(out, { recursive: true, force: true });
  });

  const status = (): ReturnType<Page['getByTestId']> => page.getByTestId('engine-detection-text');

  it('the simulator: says it is built in', async () => {
    await page.goto(server.url);
    await page.getByTestId('new-run-form').waitFor();
    await page.getByText('the built-in simulator: nothing to install, no GPU needed').waitFor();
    await page.screenshot({ path: join(shots, 'app-engine-sim.png') });
  });

  it("vLLM with a fake python: its version beside the field, the quantization a select of its --help's methods", async () => {
    await page.getByTestId('engine-vllm').check({ force: true });
    await page.getByTestId('python').fill(FAKE_PYTHON);
    await page.getByText('vLLM 0.11.0', { exact: true }).waitFor();
    // The line sits in the Python field's label, under its input.
    const pythonField = page.locator('label.field', { has: page.getByTestId('python') });
    expect(await pythonField.getByTestId('engine-detection-text').textContent()).toBe('vLLM 0.11.0');
    expect(await pythonField.getByTestId('engine-detection-detail').textContent()).toMatch(
      /^\d+ quantization methods in its --help$/,
    );
    const quantization = page.getByTestId('quantization');
    await page.locator('select[data-testid="quantization"] option[value="awq_marlin"]').waitFor({ state: 'attached' });
    const options = await quantization.locator('option').allTextContents();
    expect(options[0]).toBe('none (default)');
    expect(options).toEqual(
      expect.arrayContaining(['awq_marlin', 'gptq', 'fp8', 'compressed-tensors', 'bitsandbytes']),
    );
    expect(options).not.toContain('None');
    await quantization.selectOption('awq_marlin');
    expect(await quantization.inputValue()).toBe('awq_marlin');
    await page.screenshot({ path: join(shots, 'app-engine-detected.png') });
    expect(asked.at(-1)).toEqual({ engine: 'vllm', where: FAKE_PYTHON });
  });

  it('SGLang with the same python: asked again for that engine, its own list', async () => {
    await page.getByTestId('engine-sglang').check({ force: true });
    await page.getByText('SGLang 0.11.0', { exact: true }).waitFor();
    await page.locator('select[data-testid="quantization"] option[value="w8a8_fp8"]').waitFor({ state: 'attached' });
    expect(asked.at(-1)).toEqual({ engine: 'sglang', where: FAKE_PYTHON });
  });

  it('a python that is not there: not found with the install hint, and the quantization is free text again', async () => {
    await page.getByTestId('engine-vllm').check({ force: true });
    await page.getByTestId('python').fill('/nonexistent/venv/bin/python');
    await page.getByText('not found: pip install vllm', { exact: true }).waitFor();
    await page.getByText(/the Python interpreter '\/nonexistent\/venv\/bin\/python' was not found/).waitFor();
    const quantization = page.locator('input[data-testid="quantization"]');
    await quantization.fill('my-custom-quant');
    expect(await quantization.inputValue()).toBe('my-custom-quant');
    await page.screenshot({ path: join(shots, 'app-engine-missing.png') });
    // Start is refused under the field the look-up found wrong: no launch that can only fail.
    await page.getByTestId('model').fill('org/model');
    await page.getByTestId('start').click();
    const pythonField = page.locator('label.field', { has: page.getByTestId('python') });
    expect(await pythonField.getByTestId('field-error').textContent()).toMatch(/^not found: pip install vllm/);
    expect(await page.getByTestId('live-view').count()).toBe(0);
  });

  it('attach: nothing is probed', async () => {
    const before = asked.length;
    await page.getByTestId('engine-attach').check({ force: true });
    await page.getByTestId('url').waitFor();
    expect(await status().count()).toBe(0);
    // Back to the simulator, which is asked (and answers at once): attach sent nothing in between.
    await page.getByTestId('engine-sim').check({ force: true });
    await page.getByText('the built-in simulator: nothing to install, no GPU needed').waitFor();
    expect(asked.slice(before).map((r) => r.engine)).toEqual(['sim']);
    expect(consoleErrors).toEqual([]);
  });
});
