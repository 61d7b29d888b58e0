import type { ZodError } from 'zod';
import type { ContractMethod, ServebenchContract } from '../../shared/contract.js';
import { CONTRACT_METHODS, contractArgs } from '../../shared/contract.js';

/** The outcome of one contract call, as it crosses a transport: a result or a one-line error. */
export type CallOutcome = { ok: true; result: unknown } | { ok: false; error: string };

/** One line naming the first bad field, e.g. `concurrency.0: Too small: expected number to be >0`. */
export function zodErrorLine(error: ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid arguments';
  // Paths start with the argument index (0); leave it out so the field reads like the config.
  const path = issue.path.slice(1).map(String).join('.');
  return path ? `${path}: ${issue.message}` : issue.message;
}

/** The message a UI shows for a failed call: a user's error as is, anything else by its message's first line. */
function errorLine(error: unknown): string {
  if (error && typeof error === 'object' && 'issues' in error && Array.isArray((error as ZodError).issues)) {
    return zodErrorLine(error as ZodError);
  }
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? 'unknown error';
}

/** True for a name the contract knows (transports receive untrusted strings). */
function isContractMethod(method: unknown): method is ContractMethod {
  return typeof method === 'string' && (CONTRACT_METHODS as string[]).includes(method);
}

/**
 * Validates a call's arguments with the contract's schema, then calls the service.
 * Never throws: both transports send the outcome back as data.
 */
export async function dispatchCall(service: ServebenchContract, method: unknown, args: unknown): Promise<CallOutcome> {
  if (!isContractMethod(method)) return { ok: false, error: `unknown method '${String(method)}'` };
  if (!Array.isArray(args)) return { ok: false, error: `arguments of ${method} must be a list` };
  try {
    // Inside the try: a hostile argument (nested thousands deep) may overflow the validator's stack.
    const parsed = contractArgs[method].safeParse(args);
    if (!parsed.success) return { ok: false, error: zodErrorLine(parsed.error) };
    const fn = service[method] as (...a: unknown[]) => Promise<unknown>;
    const result = await fn.apply(service, args);
    return { ok: true, result: result ?? null };
  } catch (error) {
    return { ok: false, error: errorLine(error) };
  }
}
