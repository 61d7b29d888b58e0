import { describe, expect, it } from 'vitest';
import { PARSE_BACKLOG_BYTES, PARSE_BACKLOG_TASKS, ParseQueue } from '../../../src/core/load/parse-queue.js';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('ParseQueue backlog', () => {
  it('frees a lane at once while the backlog is small, and only once half of the bound is left when it is over', async () => {
    const queue = new ParseQueue(1_000);
    const freed: string[] = [];
    queue.afterBacklog(() => freed.push('small'));
    expect(freed).toEqual(['small']);
    for (let i = 0; i <= PARSE_BACKLOG_TASKS; i++) queue.push(() => {});
    queue.afterBacklog(() => freed.push('behind'));
    expect(freed).toEqual(['small']);
    await turn();
    expect(queue.backlog).toBe(0);
    expect(freed).toEqual(['small', 'behind']);
  });

  it('counts the bytes its reads hold', async () => {
    const queue = new ParseQueue(1_000);
    queue.push(() => {}, PARSE_BACKLOG_BYTES + 1);
    expect(queue.backlogBytes).toBe(PARSE_BACKLOG_BYTES + 1);
    let freed = false;
    queue.afterBacklog(() => (freed = true));
    expect(freed).toBe(false);
    await turn();
    expect([queue.backlogBytes, freed]).toEqual([0, true]);
  });
});
