import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';

/** Debian's chromium and the flags the browser tests launch it with (never a downloaded browser). */
export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
];

/** An HTML file opened in a new page that refuses (and records) every request to anything but file: and data:. */
export async function openOffline(
  browser: Browser,
  file: string,
  scheme: 'light' | 'dark',
): Promise<{ page: Page; outside: string[]; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, colorScheme: scheme });
  const outside: string[] = [];
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.route('**/*', async (route) => {
    const url = route.request().url();
    if (url.startsWith('file:') || url.startsWith('data:')) await route.continue();
    else {
      outside.push(url);
      await route.abort();
    }
  });
  await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  return { page, outside, errors };
}
