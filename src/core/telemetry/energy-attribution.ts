import type { RequestRecord } from '../../shared/request-record.js';
import type { GpuSample } from '../../shared/telemetry.js';
import { powerCurve } from './power-curve.js';

/** What the attribution needs of a request: its life and the tokens it had processed along it. */
type EnergyRequest = Pick<
  RequestRecord,
  'id' | 'sendMs' | 'firstTokenMs' | 'endMs' | 'chunks' | 'nIn' | 'expectedIn' | 'nOut'
>;

/** Inputs of attributeEnergy: every GPU's samples, the requests, and the idle power of each GPU. */
export interface AttributionInput {
  gpuSamples: readonly GpuSample[];
  requests: readonly EnergyRequest[];
  /** Idle power per GPU index (W), subtracted wherever that GPU's power is known; absent = gross energy. */
  idleW?: ReadonlyMap<number, number>;
}

/** Where the energy went: per request, its prompt (prefill) and output (decode) parts, in joules. */
export interface Attribution {
  /** The requests' span, first send to last end. */
  fromMs: number;
  toMs: number;
  measuredJ: number;
  netJ: number;
  attributedJ: number;
  /** Net energy of intervals in which no request processed a token (nothing to give it to). */
  unattributedJ: number;
  weights: 'fitted' | 'time';
  /** Fitted net joules per prompt token and per output token (weights 'fitted' only). */
  prefillJPerToken?: number;
  decodeJPerToken?: number;
  sampleIntervalMs: number | null;
  perRequest: Map<number, { prefillJ: number; decodeJ: number }>;
}

/** Tokens one request processed in one interval between boundaries, and its time there before and after its first token. */
interface Share {
  req: number;
  prompt: number;
  output: number;
  promptMs: number;
  outputMs: number;
}

/** Index of the slice [b[k], b[k+1]) holding t (the last slice for t at the right end). */
function sliceOf(bounds: readonly number[], t: number): number {
  let lo = 0;
  let hi = bounds.length - 1;
  if (t >= bounds[hi - 1]!) return hi - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (bounds[mid]! <= t) lo = mid;
    else hi = mid;
  }
  return lo;
}

/**
 * Adds `tokens`, processed evenly over [from, to], to the slices they overlap (a zero-length stretch: all in the
 * slice holding it).
 */
function spread(
  bounds: readonly number[],
  slices: Array<Map<number, Share>>,
  req: number,
  kind: 'prompt' | 'output' | 'promptMs' | 'outputMs',
  tokens: number,
  from: number,
  to: number,
): void {
  if (tokens <= 0) return;
  const add = (k: number, n: number): void => {
    const m = slices[k]!;
    const share = m.get(req) ?? { req, prompt: 0, output: 0, promptMs: 0, outputMs: 0 };
    share[kind] += n;
    m.set(req, share);
  };
  if (to <= from) {
    add(sliceOf(bounds, from), tokens);
    return;
  }
  for (let k = sliceOf(bounds, from); k < slices.length && bounds[k]! < to; k++) {
    const overlap = Math.min(to, bounds[k + 1]!) - Math.max(from, bounds[k]!);
    if (overlap > 0) add(k, (tokens * overlap) / (to - from));
  }
}

/**
 * Least-squares fit of each interval's net energy to a·prompt tokens + b·output tokens (no intercept). A prompt
 * token costs far less GPU time than an output token (prefill is batched over the whole prompt), so counting them
 * alike would hand a request in prefill most of an interval's energy. Null when the samples cannot tell the two
 * apart (too few intervals, prompt and output tokens in fixed proportion, or a negative cost).
 */
function fitWeights(
  energy: readonly number[],
  prompt: readonly number[],
  output: readonly number[],
): [number, number] | null {
  let pp = 0;
  let dd = 0;
  let pd = 0;
  let ep = 0;
  let ed = 0;
  let used = 0;
  for (let j = 0; j < energy.length; j++) {
    const p = prompt[j]!;
    const d = output[j]!;
    if (p === 0 && d === 0) continue;
    used++;
    pp += p * p;
    dd += d * d;
    pd += p * d;
    ep += energy[j]! * p;
    ed += energy[j]! * d;
  }
  const det = pp * dd - pd * pd;
  // Nearly collinear columns (|cos| above 0.999) leave the split undetermined.
  if (used < 4 || pp === 0 || dd === 0 || det <= 0.002 * pp * dd) return null;
  const a = (ep * dd - ed * pd) / det;
  const b = (ed * pp - ep * pd) / det;
  return a >= 0 && b > 0 ? [a, b] : null;
}

/**
 * Shares the GPUs' measured energy (less idle) out to requests by their overlap on the shared clock: the span is cut
 * at every power sample, each interval's net energy is split between the requests active in it by the tokens they
 * processed there (prompt tokens evenly over send..first token, each chunk's tokens over the gap before it),
 * prompt and output tokens weighted by their fitted cost; where no fit holds, by each request's time in the
 * interval (prefill before its first token, decode after). Energy is conserved interval by interval: attributed +
 * unattributed = net, exactly.
 */
export function attributeEnergy(input: AttributionInput): Attribution | null {
  const reqs = input.requests.filter((r) => r.endMs !== null && r.endMs >= r.sendMs);
  if (reqs.length === 0) return null;
  const fromMs = reqs.reduce((a, r) => Math.min(a, r.sendMs), Infinity);
  const toMs = reqs.reduce((a, r) => Math.max(a, r.endMs!), -Infinity);
  const byGpu = new Map<number, GpuSample[]>();
  for (const s of input.gpuSamples) {
    if (s.powerW === null) continue;
    const list = byGpu.get(s.gpu) ?? [];
    list.push(s);
    byGpu.set(s.gpu, list);
  }
  if (byGpu.size === 0 || toMs <= fromMs) return null;
  const curves = [...byGpu].map(([gpu, samples]) => ({ curve: powerCurve(samples), idle: input.idleW?.get(gpu) ?? 0 }));
  const times = [...new Set(input.gpuSamples.filter((s) => s.tMs > fromMs && s.tMs < toMs).map((s) => s.tMs))];
  const bounds = [fromMs, ...times.sort((a, b) => a - b), toMs];
  const slices: Array<Map<number, Share>> = bounds.slice(1).map(() => new Map());

  reqs.forEach((r, i) => {
    const first = r.firstTokenMs ?? r.endMs!;
    spread(bounds, slices, i, 'prompt', r.nIn ?? r.expectedIn, r.sendMs, first);
    spread(bounds, slices, i, 'promptMs', first - r.sendMs, r.sendMs, first);
    spread(bounds, slices, i, 'outputMs', r.endMs! - first, first, r.endMs!);
    let prev = r.sendMs;
    for (const [t, tokens] of r.chunks) {
      spread(bounds, slices, i, 'output', tokens, prev, t);
      prev = t;
    }
  });

  const energy = slices.map((_, k) =>
    curves.reduce((a, c) => a + c.curve.energyJ(bounds[k]!, bounds[k + 1]!, c.idle), 0),
  );
  const measuredJ = curves.reduce((a, c) => a + c.curve.energyJ(fromMs, toMs), 0);
  const promptTotals = slices.map((m) => [...m.values()].reduce((a, s) => a + s.prompt, 0));
  const outputTotals = slices.map((m) => [...m.values()].reduce((a, s) => a + s.output, 0));
  const fit = fitWeights(energy, promptTotals, outputTotals);
  // Without a fit, time stands in for tokens: in continuous batching every running request takes a slot in every step.
  const weigh = (s: Share): [number, number] =>
    fit ? [fit[0] * s.prompt, fit[1] * s.output] : [s.promptMs, s.outputMs];

  const perRequest = new Map<number, { prefillJ: number; decodeJ: number }>();
  for (const r of reqs) perRequest.set(r.id, { prefillJ: 0, decodeJ: 0 });
  let attributedJ = 0;
  let unattributedJ = 0;
  slices.forEach((m, k) => {
    const e = energy[k]!;
    const weights = [...m.values()].map((s) => [s, ...weigh(s)] as const);
    const total = weights.reduce((a, [, p, d]) => a + p + d, 0);
    if (total <= 0) {
      unattributedJ += e;
      return;
    }
    for (const [s, p, d] of weights) {
      const acc = perRequest.get(reqs[s.req]!.id)!;
      acc.prefillJ += (e * p) / total;
      acc.decodeJ += (e * d) / total;
    }
    attributedJ += e;
  });
  const spacings = curves.map((c) => c.curve.spacingMs).filter((s) => s > 0);
  return {
    fromMs,
    toMs,
    measuredJ,
    netJ: attributedJ + unattributedJ,
    attributedJ,
    unattributedJ,
    weights: fit ? 'fitted' : 'time',
    ...(fit ? { prefillJPerToken: fit[0], decodeJPerToken: fit[1] } : {}),
    sampleIntervalMs: spacings.length > 0 ? Math.max(...spacings) : null,
    perRequest,
  };
}
