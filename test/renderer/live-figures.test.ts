import { describe, expect, it } from 'vitest';
import { applyEvent, createLiveRun } from '../../src/renderer/lib/live-run.js';
import { fmtTimeLeft, formingFigures } from '../../src/renderer/lib/live-figures.js';
import { lengthsText } from '../../src/shared/level-load.js';

function run(totalLevels: number) {
  return createLiveRun({ type: 'run-started', runId: 'r', dir: '/r', simulated: true, totalLevels }, 0);
}
function start(r: ReturnType<typeof run>, levelIndex: number, warmup: number, measured: number) {
  applyEvent(r, {
    type: 'level-started',
    levelIndex,
    concurrency: 2 ** levelIndex,
    inputLen: 32,
    outputLen: 16,
    warmupRequests: warmup,
    measuredRequests: measured,
    serverConfigIndex: 0,
  } as never);
}
/** `n` requests of a level ending every `everyMs` from `fromMs`, on the run's clock. */
function finish(r: ReturnType<typeof run>, levelIndex: number, n: number, fromMs: number, everyMs: number, done0 = 0) {
  for (let i = 0; i < n; i++)
    applyEvent(r, {
      type: 'request-done',
      levelIndex,
      round: 0,
      ok: true,
      done: done0 + i + 1,
      total: r.levels[levelIndex]!.total,
      endMs: fromMs + i * everyMs,
      ttftMs: 10 + i,
      e2eMs: 100 + i,
    } as never);
}

describe('live figures', () => {
  it('an embeddings level forms E2E only (it has no TTFT), and is named by inputs per request and length', () => {
    const r = run(1);
    applyEvent(r, {
      type: 'level-started',
      levelIndex: 0,
      concurrency: 4,
      inputLen: 128,
      outputLen: 24,
      endpoint: 'embeddings',
      batchSize: 16,
      warmupRequests: 0,
      measuredRequests: 100,
      serverConfigIndex: 0,
    });
    finish(r, 0, 10, 0, 50);
    expect(formingFigures(r, 0).figures.map((x) => x.metric.key)).toEqual(['e2e_p50_ms']);
    expect(lengthsText(r.levels[0]!, true)).toBe('batch=16 in=128');
    expect(lengthsText(r.levels[0]!)).toBe('16×128');
    expect(lengthsText({ inputLen: 128, outputLen: 24 }, true)).toBe('in=128 out=24');
  });

  it('reads a time left as "about", and "estimating…" before there is one', () => {
    expect(fmtTimeLeft(null)).toBe('estimating…');
    expect(fmtTimeLeft(28)).toBe('about 28 s');
    expect(fmtTimeLeft(130)).toBe('about 2 min 10 s');
  });

  it('the figures of the level as they form, from its requests so far', () => {
    const r = run(1);
    start(r, 0, 0, 100);
    finish(r, 0, 10, 0, 50);
    const f = formingFigures(r, 0);
    expect(f).toMatchObject({ measured: 10, failed: 0 });
    expect(f.figures.map((x) => [x.metric.key, x.value])).toEqual([
      ['ttft_p50_ms', 14],
      ['ttft_p95_ms', 19],
      ['e2e_p50_ms', 104],
    ]);
    expect(f.rate).toBeCloseTo(20, 6);
  });

  it('the load offered so far: over the completed rounds only, measured as the level summary measures it', () => {
    const r = run(1);
    start(r, 1, 0, 8); // c=2
    const done = (round: number, sendMs: number, endMs: number) =>
      applyEvent(r, {
        type: 'request-done',
        levelIndex: 1,
        round,
        ok: true,
        done: 1,
        total: 8,
        endMs,
        ttftMs: 1,
        e2eMs: endMs - sendMs,
      });
    applyEvent(r, { type: 'phase', levelIndex: 1, phase: 'measure', round: 0 });
    // Round 0: two lanes, each 10 ms requests; the second lane starts 10 ms late.
    done(0, 0, 10);
    done(0, 10, 20);
    done(0, 10, 20);
    done(0, 20, 30);
    // No round done yet: a round in progress still has requests out of sight.
    expect(formingFigures(r, 1).offered).toBeNull();
    applyEvent(r, { type: 'phase', levelIndex: 1, phase: 'measure', round: 1 });
    done(1, 100, 110);
    // Window 0 .. max(last send 20, 3rd end 20): 1 in flight for 10 ms, 2 for 10 ms.
    expect(formingFigures(r, 1).offered).toEqual({
      inFlightMean: 1.5,
      inFlightP5: 1,
      windowMs: 20,
      shortfallAfterFailures: 0,
    });
  });
});
