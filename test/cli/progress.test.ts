import { describe, expect, it } from 'vitest';
import { createProgressRenderer } from '../../src/cli/progress.js';
import type { RunEvent } from '../../src/shared/events.js';

/** A plain (non-TTY) stream that keeps what was written. */
function plainStream(): { stream: NodeJS.WriteStream; text: () => string } {
  const out: string[] = [];
  const stream = { isTTY: false, write: (s: string) => out.push(s) > 0 } as unknown as NodeJS.WriteStream;
  return { stream, text: () => out.join('') };
}

const started = (extra: Partial<Extract<RunEvent, { type: 'level-started' }>> = {}): RunEvent => ({
  type: 'level-started',
  levelIndex: 0,
  concurrency: 4,
  inputLen: 512,
  outputLen: 24,
  warmupRequests: 0,
  measuredRequests: 2,
  serverConfigIndex: 0,
  ...extra,
});

const progress = (done: number): RunEvent => ({
  type: 'request-done',
  levelIndex: 0,
  round: 0,
  ok: true,
  ttftMs: 1,
  e2eMs: 2,
  endMs: 3,
  done,
  total: 2,
});

describe('CLI progress lines', () => {
  it('names a level by its fixed lengths', () => {
    const { stream, text } = plainStream();
    const render = createProgressRenderer(stream, false);
    render(started());
    render(progress(2));
    expect(text()).toContain('c=4 in=512 out=24');
  });

  it('says a prompt file brings each request’s lengths instead of showing the flags it does not use', () => {
    const { stream, text } = plainStream();
    const render = createProgressRenderer(stream, false);
    render(started({ inputFromFile: true, outputFromFile: true }));
    render(progress(2));
    expect(text()).toContain('c=4 in=file out=file');
    expect(text()).not.toContain('512');
  });
});
