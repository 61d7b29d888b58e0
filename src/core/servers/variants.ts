import { ServerConfigSchema, type ServerConfig } from '../../shared/config.js';
import { SERVER_KEYS } from '../../shared/server-schema.js';
import { engineFor } from './engines/index.js';
import { ServerConfigError } from './server-errors.js';
import type { ServerInfo } from './types.js';

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function formatIssues(error: { issues: Array<{ path: PropertyKey[]; message: string }> }): string {
  return error.issues.map((i) => `${i.path.map(String).join('.') || 'config'}: ${i.message}`).join('; ');
}

/**
 * One configuration of a server sweep: the base config with a variant's fields laid over it
 * (objects such as `diffusion` and `env` merge; everything else replaces), validated.
 */
export function applyVariant(base: ServerConfig, variant: Record<string, unknown>): ServerConfig {
  const known = new Set(SERVER_KEYS);
  const unknown = Object.keys(variant).filter((k) => !known.has(k));
  if (unknown.length > 0) {
    throw new ServerConfigError(
      `server variant ${describeVariant(variant)}: unknown field ${unknown.map((k) => `'${k}'`).join(', ')}`,
    );
  }
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(variant)) {
    const current = merged[key];
    merged[key] = isPlainObject(value) && isPlainObject(current) ? { ...current, ...value } : value;
  }
  const parsed = ServerConfigSchema.safeParse(merged);
  if (!parsed.success)
    throw new ServerConfigError(`server variant ${describeVariant(variant)}: ${formatIssues(parsed.error)}`);
  return parsed.data;
}

/** A short label for a server variant, e.g. "threshold=0.9" or "quantization=fp8, maxSeqs=64". */
export function describeVariant(variant: Record<string, unknown>): string {
  const parts: string[] = [];
  const walk = (value: unknown, key: string): void => {
    if (isPlainObject(value)) {
      for (const [k, v] of Object.entries(value)) walk(v, k);
    } else if (Array.isArray(value)) {
      parts.push(`${key}=${value.map(String).join(' ')}`);
    } else {
      parts.push(`${key}=${String(value)}`);
    }
  };
  for (const [k, v] of Object.entries(variant)) {
    if (k === 'env' && isPlainObject(v)) {
      for (const name of Object.keys(v)) parts.push(`env ${name}`); // values may be secrets
    } else {
      walk(v, k);
    }
  }
  return parts.length > 0 ? parts.join(', ') : 'base';
}

const fmt = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(1));
const positive = (n: number | undefined): n is number => n !== undefined && Number.isFinite(n) && n > 0;

/**
 * How many requests of up to `maxTokensPerRequest` tokens (prompt + output) the engine can hold at once, and why:
 * the smallest of the KV cache (kvCacheTokens / maxTokensPerRequest), the configured max-num-seqs /
 * max-running-requests (`maxSeqs`) and SGLang's logged max_running_requests. Without a KV cache size, vLLM's
 * "Maximum concurrency for N tokens per request: X" is rescaled to this request size (X * N / maxTokensPerRequest),
 * only when N was parsed. Undefined when nothing is known. The running cap is named in the engine's own words
 * (`runningLimit`: its module's, or the one that answered for an attached server, e.g. llama.cpp's slots).
 */
export function engineCapacity(
  info: ServerInfo,
  maxTokensPerRequest: number,
  maxSeqs?: number,
  runningLimit: ((n: number) => string) | undefined = engineFor(info.engine).runningLimit,
): { requests: number; reason: string } | undefined {
  const limits: Array<{ requests: number; reason: string }> = [];
  if (positive(maxTokensPerRequest)) {
    if (positive(info.kvCacheTokens)) {
      limits.push({
        requests: info.kvCacheTokens / maxTokensPerRequest,
        reason: `its KV cache of ${info.kvCacheTokens} tokens holds ${fmt(info.kvCacheTokens / maxTokensPerRequest)} requests of ${maxTokensPerRequest} tokens`,
      });
    } else if (positive(info.maxConcurrency) && positive(info.maxConcurrencyTokens)) {
      const requests = (info.maxConcurrency * info.maxConcurrencyTokens) / maxTokensPerRequest;
      limits.push({
        requests,
        reason: `it reported room for ${fmt(info.maxConcurrency)} requests of ${info.maxConcurrencyTokens} tokens, i.e. ${fmt(requests)} of ${maxTokensPerRequest}`,
      });
    }
  }
  if (positive(maxSeqs)) {
    limits.push({ requests: maxSeqs, reason: `it runs at most ${maxSeqs} sequences at once (--max-seqs)` });
  }
  if (positive(info.maxRunningRequests) && info.maxRunningRequests !== maxSeqs) {
    limits.push({
      requests: info.maxRunningRequests,
      reason: runningLimit?.(info.maxRunningRequests) ?? `it runs at most ${info.maxRunningRequests} requests at once`,
    });
  }
  if (limits.length === 0) return undefined;
  return limits.reduce((a, b) => (b.requests < a.requests ? b : a));
}

/**
 * A warning when the sweep asks for more concurrent requests than the engine can hold for THIS run's request size
 * (see engineCapacity); undefined otherwise, or when nothing is known. `maxTokensPerRequest` is the largest
 * prompt + output tokens of a request in the sweep; `maxSeqs` the configured max-num-seqs / max-running-requests.
 */
export function concurrencyWarning(
  info: ServerInfo,
  maxSweepConcurrency: number,
  maxTokensPerRequest: number,
  maxSeqs?: number,
  runningLimit?: (n: number) => string,
): string | undefined {
  const capacity = engineCapacity(
    info,
    maxTokensPerRequest,
    maxSeqs,
    runningLimit ?? engineFor(info.engine).runningLimit,
  );
  if (!capacity || maxSweepConcurrency <= capacity.requests) return undefined;
  const held = capacity.requests >= 1 ? String(Math.floor(capacity.requests)) : capacity.requests.toFixed(2);
  return (
    `concurrency ${maxSweepConcurrency} exceeds the ${held} concurrent requests of up to ${maxTokensPerRequest} tokens ` +
    `the engine can hold (${capacity.reason}); beyond that requests queue or are preempted, ` +
    'so those levels measure waiting as well as serving'
  );
}
