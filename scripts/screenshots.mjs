// Makes the README's pictures from the committed fixture runs: the HTML report of a run and a comparison of two.
// Usage: npm run build:cli && node scripts/screenshots.mjs   (needs Debian's chromium: apt-get install chromium)
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';

const root = resolve(import.meta.dirname, '..');
const cli = join(root, 'bin', 'servebench.js');
const runs = join(root, 'test', 'fixtures', 'runs');
const dest = join(root, 'docs', 'img');
const CHROMIUM = '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) {
  console.error(`screenshots: ${CHROMIUM} is absent: apt-get install chromium`);
  process.exit(2);
}
mkdirSync(dest, { recursive: true });
const tmp = mkdtempSync(join(tmpdir(), 'sb-shots-'));
const servebench = (args) => execFileSync(process.execPath, [cli, ...args], { stdio: ['ignore', 'ignore', 'inherit'] });

const pages = [
  { name: 'report.png', file: join(tmp, 'report.html'), make: (f) => ['report', join(runs, 'closed'), '--out', f] },
  {
    name: 'compare.png',
    file: join(tmp, 'compare.html'),
    make: (f) => ['compare', join(runs, 'closed'), join(runs, 'sweep'), '--out', f],
  },
];

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
});
try {
  for (const p of pages) {
    servebench(p.make(p.file));
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 }, colorScheme: 'light' });
    // Offline by design: anything the page asks of the network is refused (and would show in the picture).
    await page.route('**/*', (route) => route.abort());
    await page.setContent(readFileSync(p.file, 'utf8'), { waitUntil: 'load' });
    await page.screenshot({ path: join(dest, p.name) });
    await page.close();
    console.log(`docs/img/${p.name}`);
  }
} finally {
  await browser.close();
  rmSync(tmp, { recursive: true, force: true });
}
