import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { ServebenchService } from '../../src/core/api.js';
import { startUiServer } from '../../src/core/ui-server/index.js';
import type { UiServer } from '../../src/core/ui-server/index.js';
import { collectErrors, launchChromium } from './chromium.js';

/** Waits end on what the page shows; this only bounds them, generously, for a loaded or slow machine. */
export const E2E_WAIT_MS = 120_000;

/** The built renderer that `servebench ui` serves (ensureBuilt makes it). */
const RENDERER_DIR = join(resolve(import.meta.dirname, '..', '..'), 'out', 'renderer');

/** Options of the page: its viewport, whether it takes downloads. */
export interface AppPageOptions {
  viewport: { width: number; height: number };
  acceptDownloads?: boolean;
}

/** `servebench ui` over `service` and a headless Chromium page for it, whose console errors go to `errors`. */
export async function openAppPage(
  service: ServebenchService,
  errors: string[],
  options: AppPageOptions,
): Promise<{ server: UiServer; browser: Browser; page: Page }> {
  const server = await startUiServer({ service, port: 0, staticDir: RENDERER_DIR });
  const browser = await launchChromium();
  const page = await browser.newPage(options);
  page.setDefaultTimeout(E2E_WAIT_MS);
  collectErrors(page, errors);
  return { server, browser, page };
}
