import { describe, expect, it } from 'vitest';
import { RecordFlusher } from '../../../src/core/load/record-flusher.js';
import { makeRecord } from '../metrics/make-record.js';

const ids = (batches: Array<Array<{ id: number }>>): number[][] => batches.map((b) => b.map((r) => r.id));

describe('RecordFlusher', () => {
  it('hands records on in id order in batches as they finish, and the rest at the end of the batch', () => {
    const out: Array<Array<{ id: number }>> = [];
    const f = new RecordFlusher((r) => out.push(r), 3, 100);
    f.startBatch(10);
    for (const id of [11, 10, 13, 12, 15]) f.push(makeRecord({ id }));
    // 12 lets 12 and 13 out at once: a batch goes as soon as it is full.
    expect(ids(out)).toEqual([[10, 11, 12, 13]]);
    f.endBatch();
    expect(ids(out)).toEqual([[10, 11, 12, 13], [15]]);
  });

  it('holds back at most its reorder bound behind a request still running', () => {
    const out: Array<Array<{ id: number }>> = [];
    const f = new RecordFlusher((r) => out.push(r), 2, 3);
    f.startBatch(0);
    // Request 0 hangs: 1..4 finish; past 3 waiting they go out anyway, in order.
    for (const id of [1, 2, 3, 4]) f.push(makeRecord({ id }));
    expect(ids(out)).toEqual([[1, 2, 3, 4]]);
    f.push(makeRecord({ id: 0 }));
    f.endBatch();
    expect(ids(out)).toEqual([[1, 2, 3, 4], [0]]);
  });
});
