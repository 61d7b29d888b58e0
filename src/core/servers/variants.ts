import { ServerConfigSchema, type ServerConfig } from '../../shared/config.js';
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
  const known = new Set(Object.keys(ServerConfigSchema.shape));
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

/**
 * A warning when the sweep asks for more concurrent requests than the engine said it can hold
 * (vLLM: "Maximum concurrency for N tokens per request"; SGLang: max_running_requests); undefined otherwise.
 */
export function concurrencyWarning(info: ServerInfo, maxSweepConcurrency: number): string | undefined {
  if (info.maxConcurrency === undefined || maxSweepConcurrency <= info.maxConcurrency) return undefined;
  const held = Number.isInteger(info.maxConcurrency) ? String(info.maxConcurrency) : info.maxConcurrency.toFixed(2);
  return (
    `concurrency ${maxSweepConcurrency} exceeds the ${held} concurrent requests the engine reported it can hold` +
    `${info.kvCacheTokens !== undefined ? ` (KV cache ${info.kvCacheTokens} tokens)` : ''}; ` +
    'beyond that requests queue or are preempted, so those levels measure waiting as well as serving'
  );
}
