import { describe, expect, it } from 'vitest';
import { levelEvidence, type LevelEvidenceInput } from '../../../src/core/checks/evidence.js';
import { levelChecks, runChecks } from '../../../src/core/checks/registry.js';
import { summarize } from '../../../src/core/metrics/percentiles.js';
import { roundResults } from '../../../src/core/metrics/throughput.js';
import { levelTelemetry } from '../../fakes/level-telemetry.js';
import { streamed } from '../metrics/make-record.js';

const records = Array.from({ length: 6 }, (_, i) =>
  streamed({ sendMs: i * 100, chunks: 8, gapMs: 10 }, { id: i, round: i % 2 }),
);

function evidence(over: Partial<LevelEvidenceInput> = {}) {
  return levelEvidence({
    records,
    rounds: roundResults(records, 2),
    ttftMs: summarize(records.map((r) => (r.firstTokenMs as number) - r.sendMs)),
    openLoop: false,
    clientLagsMs: [],
    load: { offered: null, askedConcurrency: 1, loopLagP99Ms: 2 },
    prompts: {
      uniquePrefix: true,
      sharedPrefixes: false,
      promptsFromFile: false,
      repeatedRecords: 0,
      openingTokens: null,
      multiTurn: false,
    },
    coalescedItl: null,
    responseCache: null,
    ...over,
  });
}

describe('the check registry', () => {
  it("judges a level's evidence with every check that applies, in order, each with a code and facts", () => {
    const checks = levelChecks(evidence());
    expect(checks.map((c) => c.id)).toEqual([
      'output-length',
      'input-length',
      'streaming',
      'warmup',
      'round-spread',
      'sample-size',
      'errors',
      'prefix-cache',
      'client',
      'token-agreement',
    ]);
    for (const c of checks) {
      expect(c.code, c.id).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(c.facts, c.id).toBeTypeOf('object');
    }
  });

  it('adds throttling and preemptions when a telemetry recorder ran, cut-short when the level was cut short', () => {
    const judged = levelChecks(
      evidence({
        telemetry: { summary: levelTelemetry({ preemptions: 0 }) },
        cutShort: { reason: 'cancelled by the user', byServer: false },
      }),
    );
    expect(judged.slice(-3).map((c) => [c.id, c.status, c.code])).toEqual([
      ['cut-short', 'warn', 'cancelled'],
      ['throttling', 'pass', 'no-slowdown'],
      ['preemptions', 'pass', 'none-preempted'],
    ]);
    // A recorder that recorded nothing: throttling is unknown, never a pass.
    expect(levelChecks(evidence({ telemetry: {} })).find((c) => c.id === 'throttling')).toMatchObject({
      status: 'warn',
      code: 'telemetry-unavailable',
    });
  });

  it("judges the run's own evidence: the server check", () => {
    const run = { serverFailure: null, simulated: true, serversStarted: 1, failure: null };
    expect(runChecks(run)).toMatchObject([{ id: 'server', status: 'warn', code: 'simulated' }]);
    expect(runChecks({ ...run, serversStarted: 0 })).toEqual([]);
  });
});
