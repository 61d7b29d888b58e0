import { UserError } from '../errors.js';

/** One injected fault (docs/simulator.md, "Faults"). */
export type SimFault =
  | { kind: 'crash-after'; requests: number }
  | { kind: 'error-rate'; p: number }
  | { kind: 'midstream-error-rate'; p: number }
  | { kind: 'malformed-rate'; p: number }
  | { kind: 'buffered' }
  | { kind: 'stall-ms'; ms: number }
  | { kind: 'slow-start'; ms: number }
  | { kind: 'oom-on-start' }
  | { kind: 'close-after-stream' };

/** The fault specs the sim accepts, for help texts and error messages. */
export const FAULT_SPECS = [
  'crash-after=N',
  'error-rate=P',
  'midstream-error-rate=P',
  'malformed-rate=P',
  'buffered',
  'stall-ms=M',
  'slow-start=MS',
  'oom-on-start',
  'close-after-stream',
] as const;

function probability(name: string, raw: string | undefined): number {
  const p = Number(raw);
  if (raw === undefined || raw === '' || !Number.isFinite(p) || p < 0 || p > 1) {
    throw new UserError(`fault '${name}' needs a probability between 0 and 1, e.g. --fault ${name}=0.1`);
  }
  return p;
}

function count(name: string, raw: string | undefined, example: string): number {
  const n = Number(raw);
  if (raw === undefined || raw === '' || !Number.isInteger(n) || n < 0) {
    throw new UserError(`fault '${name}' needs a whole number >= 0, e.g. --fault ${name}=${example}`);
  }
  return n;
}

/** Parses a `--fault` spec such as 'error-rate=0.1'; a bad spec throws a UserError naming the fix. */
export function parseFault(spec: string): SimFault {
  const eq = spec.indexOf('=');
  const name = (eq < 0 ? spec : spec.slice(0, eq)).trim();
  const value = eq < 0 ? undefined : spec.slice(eq + 1).trim();
  const noValue = (f: SimFault): SimFault => {
    if (value !== undefined) throw new UserError(`fault '${name}' takes no value; use --fault ${name}`);
    return f;
  };
  switch (name) {
    case 'crash-after':
      return { kind: 'crash-after', requests: count(name, value, '10') };
    case 'error-rate':
      return { kind: 'error-rate', p: probability(name, value) };
    case 'midstream-error-rate':
      return { kind: 'midstream-error-rate', p: probability(name, value) };
    case 'malformed-rate':
      return { kind: 'malformed-rate', p: probability(name, value) };
    case 'stall-ms':
      return { kind: 'stall-ms', ms: count(name, value, '500') };
    case 'slow-start':
      return { kind: 'slow-start', ms: count(name, value, '2000') };
    case 'buffered':
      return noValue({ kind: 'buffered' });
    case 'oom-on-start':
      return noValue({ kind: 'oom-on-start' });
    case 'close-after-stream':
      return noValue({ kind: 'close-after-stream' });
    default:
      throw new UserError(`unknown fault '${spec}'; use one of: ${FAULT_SPECS.join(', ')}`);
  }
}

/** All faults folded into one lookup the request path can read cheaply. */
export interface FaultSet {
  crashAfter: number | null;
  errorRate: number;
  midstreamErrorRate: number;
  malformedRate: number;
  buffered: boolean;
  stallMs: number;
  slowStartMs: number;
  oomOnStart: boolean;
  closeAfterStream: boolean;
}

/** Folds a list of faults; a later fault of the same kind wins. */
export function foldFaults(faults: readonly SimFault[] = []): FaultSet {
  const set: FaultSet = {
    crashAfter: null,
    errorRate: 0,
    midstreamErrorRate: 0,
    malformedRate: 0,
    buffered: false,
    stallMs: 0,
    slowStartMs: 0,
    oomOnStart: false,
    closeAfterStream: false,
  };
  for (const f of faults) {
    switch (f.kind) {
      case 'crash-after':
        set.crashAfter = f.requests;
        break;
      case 'error-rate':
        set.errorRate = f.p;
        break;
      case 'midstream-error-rate':
        set.midstreamErrorRate = f.p;
        break;
      case 'malformed-rate':
        set.malformedRate = f.p;
        break;
      case 'buffered':
        set.buffered = true;
        break;
      case 'stall-ms':
        set.stallMs = f.ms;
        break;
      case 'slow-start':
        set.slowStartMs = f.ms;
        break;
      case 'oom-on-start':
        set.oomOnStart = true;
        break;
      case 'close-after-stream':
        set.closeAfterStream = true;
        break;
    }
  }
  return set;
}
