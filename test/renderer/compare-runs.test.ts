import { describe, expect, it, vi } from 'vitest';
import { runSummary } from './run-summary.js';
import {
  baselineOf,
  comparable,
  compareHint,
  compareOrder,
  keepPicks,
  saveComparison,
  togglePick,
} from '../../src/renderer/lib/compare-runs.js';
import { fakePage } from './fake-page.js';
import { COMPARE_MAX_RUNS } from '../../src/shared/contract.js';
import type { CompareFormat, RunComparison } from '../../src/shared/contract.js';

const run = runSummary;

const comparison = (ids: string[], format: CompareFormat): RunComparison => ({
  format,
  fileName: `compare-${ids.join('-vs-')}.${format}`,
  mediaType: format === 'html' ? 'text/html' : 'text/markdown',
  text: `# ${ids.join(' vs ')}`,
  series: ids.length,
  levels: 1,
});

describe('Compare in the runs list', () => {
  it('offers only finished, readable runs with a measured level', () => {
    expect(comparable(run('a'))).toBe(true);
    expect(comparable(run('c', { status: 'cancelled' }))).toBe(true);
    expect(comparable(run('r', { status: 'running' }))).toBe(false);
    expect(comparable(run('u', { unreadable: 'is damaged' }))).toBe(false);
    expect(comparable(run('e', { status: 'failed', levels: 0 }))).toBe(false);
  });

  it('keeps picks in the order they were made (the first is the baseline), once each, up to the limit', () => {
    let picked: string[] = [];
    picked = togglePick(picked, 'b', true);
    picked = togglePick(picked, 'a', true);
    picked = togglePick(picked, 'b', true);
    expect(picked).toEqual(['a', 'b']);
    expect(togglePick(picked, 'a', false)).toEqual(['b']);
    const full = Array.from({ length: COMPARE_MAX_RUNS }, (_, i) => `r${i}`);
    expect(togglePick(full, 'one-more', true)).toEqual(full);
  });

  it('drops picks the list no longer offers (deleted, renamed, now unreadable)', () => {
    const runs = [run('a'), run('b', { unreadable: 'is damaged' }), run('c')];
    expect(keepPicks(['c', 'b', 'gone', 'a'], runs)).toEqual(['c', 'a']);
  });

  it('says what to do until two runs are picked', () => {
    expect(compareHint(0)).toBe('Compare: pick two or more runs in the list.');
    expect(compareHint(1)).toBe('Compare: pick one more run.');
    expect(compareHint(3)).toBe('3 runs picked; choose the baseline.');
    expect(compareHint(COMPARE_MAX_RUNS)).toMatch(/at most/);
  });

  it('compares against the baseline chosen, not the first ticked; the first stands in until one is chosen', () => {
    expect(compareOrder(['a', 'b', 'c'], 'c')).toEqual(['c', 'a', 'b']);
    expect(compareOrder(['a', 'b', 'c'], null)).toEqual(['a', 'b', 'c']);
    // A baseline unticked since: the first picked again.
    expect(baselineOf(['a', 'b'], 'c')).toBe('a');
    expect(compareOrder([], 'c')).toEqual([]);
  });

  it('browser mode: the comparison downloads as a file named after the runs', async () => {
    const { page, made, blobs } = fakePage('blob:c');
    const api = { compareRuns: vi.fn(async (ids: string[], f: CompareFormat) => comparison(ids, f)) };
    expect(await saveComparison(api, { page }, ['a', 'b'], 'md')).toBe('Downloaded compare-a-vs-b.md');
    expect(api.compareRuns).toHaveBeenCalledWith(['a', 'b'], 'md');
    const link = made.find((e) => e.tag === 'a')!;
    expect(link.download).toBe('compare-a-vs-b.md');
    expect(link.click).toHaveBeenCalled();
    expect(await blobs[0]!.text()).toBe('# a vs b');
    expect(blobs[0]!.type).toMatch(/^text\/markdown/);
  });

  it('Electron: the save dialog in main does it; a cancelled dialog says nothing', async () => {
    const { page } = fakePage('blob:c');
    const api = { compareRuns: vi.fn() };
    const saved = vi.fn(async () => ({ saved: '/home/u/compare.html' as string | null }));
    expect(await saveComparison(api, { bridge: { saveComparison: saved }, page }, ['a', 'b'], 'html')).toBe(
      'Saved /home/u/compare.html',
    );
    expect(saved).toHaveBeenCalledWith(['a', 'b'], 'html');
    saved.mockResolvedValueOnce({ saved: null });
    expect(await saveComparison(api, { bridge: { saveComparison: saved }, page }, ['a', 'b'], 'md')).toBe('');
    expect(api.compareRuns).not.toHaveBeenCalled();
  });
});
