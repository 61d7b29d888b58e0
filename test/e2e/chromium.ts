import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';

/** Debian's chromium, which the e2e tests drive (apt-get install chromium). */
export const CHROMIUM = '/usr/bin/chromium';

/** Headless Chromium that reaches nothing but the pages a test opens. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Collects the page's console errors and uncaught exceptions into `errors` (a test expects none). */
export function collectErrors(page: Page, errors: string[]): void {
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
}
