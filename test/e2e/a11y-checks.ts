import type { Page } from 'playwright-core';

/** The controls a user operates: each must have a name of its own. */
const CONTROLS = 'input:not([type=hidden]), select, textarea, button, summary, [role=menuitem]';

/**
 * Controls on the page, visible ones only, whose accessible name (as Chromium computes it) is missing
 * or is only the placeholder: a placeholder goes away as soon as the user types, so it is no label.
 */
export async function unnamed(page: Page): Promise<string[]> {
  const bad: string[] = [];
  const all = page.locator(CONTROLS);
  for (let i = 0; i < (await all.count()); i++) {
    const el = all.nth(i);
    if (!(await el.isVisible())) continue;
    const snapshot = (await el.ariaSnapshot({ timeout: 5000 })).split('\n')[0] ?? '';
    // `- textbox "Concurrency"` (quoted again when the name has a colon), or `- text: Per level…` for a summary.
    const match = /^- '?[a-z]+(?: "((?:[^"\\]|\\.)*)"|: "?(.*?)"?$)/.exec(snapshot);
    const name = match?.[1] ?? match?.[2] ?? '';
    const placeholder = (await el.getAttribute('placeholder')) ?? '';
    if (name.trim() === '' || name === placeholder) {
      bad.push(`${snapshot} ${await el.evaluate((e) => e.outerHTML.slice(0, 160))}`);
    }
  }
  return bad;
}

/**
 * Tabs round the whole page once; returns the controls never reached
 * (a radio group is one stop: reaching one of its radios reaches the group) and those reached without
 * a visible focus ring.
 */
export async function tabThrough(page: Page): Promise<{ missed: string[]; noRing: string[] }> {
  await page.evaluate("document.querySelectorAll('[data-reached]').forEach((e) => e.removeAttribute('data-reached'))");
  const noRing: string[] = [];
  // From wherever the focus was: past the page's end the focus leaves it once, then wraps round to its top.
  let outside = 0;
  for (let i = 0; i < 400 && outside < 2; i++) {
    await page.keyboard.press('Tab');
    // In the page (this file is typed for Node, so page code is a string, as in the other e2e files).
    const step = await page.evaluate<{ out: boolean; again: boolean; ring: boolean; what: string }>(`(() => {
      const e = document.activeElement;
      if (!e || e === document.body) return { out: true, again: false, ring: true, what: '' };
      const again = e.hasAttribute('data-reached');
      e.setAttribute('data-reached', '');
      const style = getComputedStyle(e);
      const ring = (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0) || style.boxShadow !== 'none';
      return { out: false, again, ring, what: e.outerHTML.slice(0, 120) };
    })()`);
    if (step.out) outside++;
    else if (step.again && outside > 0) break;
    else if (!step.ring) noRing.push(step.what);
  }
  const missed = await page.evaluate<string[]>(`(() => {
    const out = [];
    for (const e of document.querySelectorAll(${JSON.stringify(CONTROLS)})) {
      const radio = e.tagName === 'INPUT' && e.type === 'radio';
      // The segmented choices draw their radios hidden inside a visible label.
      const shown = e.checkVisibility({ visibilityProperty: true }) || (radio && e.closest('label') !== null);
      if (!shown || e.disabled || e.tabIndex < 0 || e.hasAttribute('data-reached')) continue;
      if (radio && e.name && document.querySelectorAll('input[type=radio][name="' + e.name + '"][data-reached]').length > 0) continue;
      out.push(e.outerHTML.slice(0, 120));
    }
    return out;
  })()`);
  return { missed, noRing };
}
