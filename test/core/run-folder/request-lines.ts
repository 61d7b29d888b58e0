import type { RequestRecord } from '../../../src/shared/request-record.js';

/** A whole request record as the writer writes it (a measured, successful request of level `levelIndex`). */
export function requestRecord(id: number, over: Partial<RequestRecord> = {}): RequestRecord {
  const sendMs = 1000 + id * 10;
  return {
    id,
    requestTag: `sb-test-${id}`,
    levelIndex: 0,
    round: 0,
    warmup: false,
    sendMs,
    firstTokenMs: sendMs + 5,
    endMs: sendMs + 20,
    chunks: [
      [sendMs + 5, 1],
      [sendMs + 20, 1],
    ],
    nOut: 2,
    nOutSource: 'server',
    chunkTokensSource: 'server',
    clientChunkCount: 2,
    nIn: 8,
    expectedIn: 8,
    expectedOut: 2,
    finishReason: 'length',
    ok: true,
    malformedLines: 0,
    ...over,
  };
}

/** requests.jsonl text of these records, newline-terminated. */
export const requestLines = (records: RequestRecord[]): string => records.map((r) => `${JSON.stringify(r)}\n`).join('');
