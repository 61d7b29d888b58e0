import { describe, expect, it } from 'vitest';
import { createAttachWatch } from '../../../src/core/servers/attach-watch.js';
import { fakeClock, settle } from './fake-clock.js';

/** A fetch for the readiness path: 200 while `up()`, a refused connection otherwise; counts its calls. */
function switchable(up: () => boolean): typeof fetch & { calls: number } {
  const f = (async () => {
    f.calls++;
    if (!up()) throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
    return new Response('', { status: 200 });
  }) as unknown as typeof fetch & { calls: number };
  f.calls = 0;
  return f;
}

function watch(up: () => boolean, clock = fakeClock()) {
  const fetchFn = switchable(up);
  const w = createAttachWatch('http://127.0.0.1:8000', '/health', {
    fetch: fetchFn,
    clock,
    pollMs: 1_000,
    comebackMs: 5_000,
    readyTimeoutMs: 60_000,
  });
  return { w, clock, fetchFn };
}

describe('the watch over an attached server', () => {
  it('a request refused during a level: died at once, the failure names the server', async () => {
    const { w } = watch(() => true);
    expect(w.hasDied()).toBeNull();
    w.requestRefused();
    expect(w.hasDied()).toMatchObject({ kind: 'unreachable' });
    expect((await w.died).message).toBe(
      'the attached server at http://127.0.0.1:8000 stopped answering (a request was refused: nothing listens there now)',
    );
  });

  it('gone for a while between levels (seen by the polls) and back before the next: said, not dead', async () => {
    let up = true;
    const { w, clock } = watch(() => up);
    w.levelEnded();
    await clock.advance(1_000);
    up = false;
    await clock.advance(3_000);
    up = true;
    await clock.advance(1_000);
    const note = await w.levelStarting();
    expect(w.hasDied()).toBeNull();
    expect(note).toMatch(
      /^the attached server at http:\/\/127\.0\.0\.1:8000 did not answer for about \d+ s between levels and answers again/,
    );
    // The next level finds nothing new to say.
    w.levelEnded();
    await clock.advance(2_000);
    expect(await w.levelStarting()).toBeNull();
  });

  it('no probes while a level runs: the server under measurement gets none of them', async () => {
    const { w, clock, fetchFn } = watch(() => true);
    expect(await w.levelStarting()).toBeNull();
    const during = fetchFn.calls;
    await clock.advance(30_000);
    expect(fetchFn.calls).toBe(during);
    w.levelEnded();
    await clock.advance(3_000);
    expect(fetchFn.calls).toBe(during + 3);
    w.stop();
    await clock.advance(3_000);
    expect(fetchFn.calls).toBe(during + 3);
  });

  it('still gone when the next level is due and for the whole grace: died, naming how long', async () => {
    const { w, clock } = watch(() => false);
    const starting = w.levelStarting();
    await clock.advance(6_000);
    expect(await starting).toBeNull();
    expect(w.hasDied()?.message).toBe(
      'the attached server at http://127.0.0.1:8000 stopped answering (ECONNREFUSED between levels, for over 5 s)',
    );
  });

  it('a cancel while waiting for it to come back ends the wait, and is no death', async () => {
    const { w, clock } = watch(() => false);
    const controller = new AbortController();
    const starting = w.levelStarting(controller.signal);
    await clock.advance(1_000);
    controller.abort();
    await settle();
    expect(await starting).toBeNull();
    expect(w.hasDied()).toBeNull();
  });
});
