import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../../src/shared/events.js';
import {
  ATTACH_TRANSITIONS,
  IllegalTransitionError,
  LAUNCH_TRANSITIONS,
  Lifecycle,
  type LifecycleState,
} from '../../../src/core/servers/lifecycle-state.js';

function machine(table = LAUNCH_TRANSITIONS): { lifecycle: Lifecycle; states: () => string[]; events: RunEvent[] } {
  const events: RunEvent[] = [];
  const lifecycle = new Lifecycle(table, (e) => events.push(e));
  return {
    lifecycle,
    events,
    states: () => events.flatMap((e) => (e.type === 'server-state' ? [e.state] : [])),
  };
}

function walk(lifecycle: Lifecycle, path: LifecycleState[]): void {
  for (const state of path) lifecycle.to(state);
}

describe('the server lifecycle state machine', () => {
  it('walks a launch from checking to stopped and reports each state once, with its detail', () => {
    const m = machine();
    m.lifecycle.to('checking', 'checking vLLM');
    walk(m.lifecycle, ['launching', 'loading', 'ready', 'stopping', 'stopped']);
    expect(m.states()).toEqual(['checking', 'launching', 'loading', 'ready', 'stopping', 'stopped']);
    expect(m.events[0]).toEqual({ type: 'server-state', state: 'checking', detail: 'checking vLLM' });
    expect(m.events.at(-1)).toEqual({ type: 'server-state', state: 'stopped' });
    expect(m.lifecycle.state).toBe('stopped');
  });

  it('reports a death while serving as failed, with no stopping or stopped (reaping is silent)', () => {
    const m = machine();
    walk(m.lifecycle, ['checking', 'launching', 'loading', 'ready', 'reaping', 'failed']);
    expect(m.states()).toEqual(['checking', 'launching', 'loading', 'ready', 'failed']);
  });

  it('allows the start failures: before launch, at spawn, an exit while loading, a time-out after the stop', () => {
    for (const path of [
      ['checking', 'failed'],
      ['checking', 'launching', 'failed'],
      ['checking', 'launching', 'loading', 'reaping', 'failed'],
      ['checking', 'launching', 'loading', 'stopping', 'stopped', 'failed'],
    ] as LifecycleState[][]) {
      const m = machine();
      walk(m.lifecycle, path);
      expect(m.lifecycle.state).toBe('failed');
    }
  });

  it('refuses illegal transitions and stays where it was', () => {
    const illegal: Array<[LifecycleState[], LifecycleState]> = [
      [[], 'ready'], // nothing is ready before it was checked
      [['checking'], 'ready'], // a launch is never ready without a process
      [['checking', 'launching', 'loading', 'ready'], 'loading'],
      [['checking', 'launching', 'loading', 'ready'], 'ready'],
      [['checking', 'launching', 'loading', 'ready', 'reaping'], 'stopping'], // dead: nothing to stop
      [['checking', 'launching', 'loading', 'ready', 'stopping', 'stopped'], 'ready'],
      [['checking', 'launching', 'loading', 'ready', 'reaping', 'failed'], 'stopped'],
      [['checking', 'failed'], 'checking'],
    ];
    for (const [path, next] of illegal) {
      const m = machine();
      walk(m.lifecycle, path);
      const before = m.lifecycle.state;
      const eventsBefore = m.events.length;
      expect(m.lifecycle.can(next)).toBe(false);
      expect(() => m.lifecycle.to(next)).toThrow(IllegalTransitionError);
      expect(() => m.lifecycle.to(next)).toThrow(`${before} -> ${next}`);
      expect(m.lifecycle.state).toBe(before);
      expect(m.events).toHaveLength(eventsBefore);
    }
  });

  it('lets an attach report loading repeatedly, and never launch or stop', () => {
    const m = machine(ATTACH_TRANSITIONS);
    walk(m.lifecycle, ['checking', 'loading', 'loading', 'ready']);
    expect(m.states()).toEqual(['checking', 'loading', 'loading', 'ready']);
    expect(m.lifecycle.can('stopping')).toBe(false);
    const other = machine(ATTACH_TRANSITIONS);
    other.lifecycle.to('checking');
    expect(() => other.lifecycle.to('launching')).toThrow(IllegalTransitionError);
  });

  it('has every state in both tables, and only states as targets', () => {
    const states = Object.keys(LAUNCH_TRANSITIONS).sort();
    expect(Object.keys(ATTACH_TRANSITIONS).sort()).toEqual(states);
    for (const table of [LAUNCH_TRANSITIONS, ATTACH_TRANSITIONS])
      for (const targets of Object.values(table)) for (const t of targets) expect(states).toContain(t);
  });
});
