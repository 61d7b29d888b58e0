import { describe, expect, it } from 'vitest';
import type { RunSummary } from '../../src/shared/contract.js';
import { matchesRunFilter } from '../../src/renderer/lib/run-filter.js';

const run: RunSummary = {
  id: '20261130T094800Z-nightly',
  dir: '/runs/20261130T094800Z-nightly',
  label: 'nightly H200',
  startedAt: '2026-11-30T09:48:00.000Z',
  status: 'completed',
  simulated: false,
  levels: 3,
  engine: 'vllm',
  model: 'Qwen/Qwen2.5-7B-Instruct',
};

describe('runs list filter', () => {
  it.each([
    ['', true],
    ['qwen', true],
    ['VLLM qwen2.5', true],
    ['h200', true],
    ['sglang', false],
    ['qwen sglang', false],
  ])('%j matches: %s', (filter, expected) => {
    expect(matchesRunFilter(run, filter)).toBe(expected);
  });
});
