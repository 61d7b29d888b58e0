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

  it('names an embeddings or rerank level by inputs per request and their length: it has no output length', () => {
    const { stream, text } = plainStream();
    const render = createProgressRenderer(stream, false);
    render(started({ endpoint: 'rerank', batchSize: 32, inputLen: 128 }));
    render(progress(2));
    expect(text()).toContain('c=4 batch=32 in=128');
    expect(text()).not.toContain('out=');
  });

  it('says a prompt file brings each request’s lengths instead of showing the flags it does not use', () => {
    const { stream, text } = plainStream();
    const render = createProgressRenderer(stream, false);
    render(started({ inputFromFile: true, outputFromFile: true }));
    render(progress(2));
    expect(text()).toContain('c=4 in=file out=file');
    expect(text()).not.toContain('512');
  });

  it('says prompt building as it goes (its start, then each quarter), not a silent 0 requests', () => {
    const { stream, text } = plainStream();
    const render = createProgressRenderer(stream, false);
    render(started({ measuredRequests: 100_512 }));
    for (const done of [0, 1005, 25_128, 26_000, 50_256, 100_512])
      render({ type: 'phase', levelIndex: 0, phase: 'prompts', done, total: 100_512 });
    expect(
      text()
        .split('\n')
        .filter((l) => l.includes('prompt')),
    ).toEqual([
      '  c=4 in=512 out=24: calibrating prompt length (100,512 prompts)',
      '  c=4 in=512 out=24: prompts 25,128/100,512',
      '  c=4 in=512 out=24: prompts 50,256/100,512',
      '  c=4 in=512 out=24: prompts 100,512/100,512',
    ]);
  });

  it('says the time left of the run on its own clock, "estimating" until a pace is measured', () => {
    const { stream, text } = plainStream();
    const wall = Date.parse('2026-01-01T00:00:20.000Z');
    const render = createProgressRenderer(stream, false, { wallNow: () => wall });
    render({
      type: 'run-started',
      runId: 'r',
      dir: '/r',
      simulated: true,
      totalLevels: 1,
      startedAt: '2026-01-01T00:00:00.000Z',
      clockOriginWall: '2026-01-01T00:00:00.000Z',
      plan: [{ concurrency: 4, requests: 400 }],
    });
    render(started({ measuredRequests: 400 }));
    render({ type: 'phase', levelIndex: 0, phase: 'measure', round: 0, atMs: 0 });
    const done = (n: number, endMs: number): RunEvent => ({ ...progress(n), endMs, total: 400 }) as RunEvent;
    render(done(1, 100));
    // 100 of 400 in 10 s: 30 s left at 10/s; the wall clock says 20 s on the run's, 10 s after that event.
    render(done(100, 10_000));
    expect(text()).toContain('1/400 requests, run left: estimating…');
    expect(text()).toContain('100/400 requests, run left about 20 s');
  });

  it('names the server configuration a sweep moves to', () => {
    const { stream, text } = plainStream();
    createProgressRenderer(stream, false)({ type: 'server-config', index: 1, total: 3 });
    expect(text()).toContain('server configuration 2 of 3');
  });
});
