/**
 * Several replicas behind one `--url A,B,C`: the one reading of the list, and how the client spreads requests over
 * them (no router in front: servebench balances itself).
 */

/** How requests are spread over replicas: in turn, or to the one with the fewest requests in flight. */
export type BalanceMode = 'round-robin' | 'least-outstanding';

/** The most replicas one run balances over: each is probed and gets a row in every table. */
export const MAX_REPLICAS = 64;

/** The URLs of a `--url` text, in order (one URL, or several comma-separated). */
export function replicaUrls(text: string | undefined): string[] {
  if (text === undefined) return [];
  return text
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u.length > 0);
}

/** A replica's name in tables and records: its place in `--url`, 1-based, and its address. */
export function replicaName(index: number, url: string): string {
  return `#${index + 1} ${url}`;
}
