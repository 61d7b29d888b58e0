/** Parsing of nvidia-smi CSV values: bracketed markers and `N/A` are unknown (null), never 0. */

/** True for values nvidia-smi prints when it has no reading: `[N/A]`, `[Not Supported]`, `[Unknown Error]`, `N/A`, ... */
export function isSmiUnknown(raw: string): boolean {
  const value = raw.trim();
  return value === '' || value === 'N/A' || /^\[.*\]$/.test(value) || /^Not Supported$/i.test(value);
}

/** The value as text, or null when nvidia-smi gave none. */
export function parseSmiText(raw: string | undefined): string | null {
  if (raw === undefined || isSmiUnknown(raw)) return null;
  return raw.trim();
}

/** A number (units such as `MiB`, `W`, `MHz`, `%` tolerated), or null when unknown or not numeric. */
export function parseSmiNumber(raw: string | undefined): number | null {
  const text = parseSmiText(raw);
  if (text === null) return null;
  const match = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?/.exec(text);
  if (!match) return null;
  const value = Number(match[0]);
  return Number.isFinite(value) ? value : null;
}

/**
 * A reading as nvidia-smi printed it: like parseSmiNumber, but `inf`, `nan` and numbers past a double's range come back
 * non-finite, so the sample's bounds name them as impossible instead of taking them for "no reading".
 */
export function parseSmiReading(raw: string | undefined): number | null {
  const text = parseSmiText(raw);
  if (text === null) return null;
  const special = /^([-+]?)(inf(?:inity)?|nan)\b/i.exec(text);
  if (special) return /nan/i.test(special[2]!) ? NaN : special[1] === '-' ? -Infinity : Infinity;
  const match = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?/.exec(text);
  return match ? Number(match[0]) : null;
}

/** A throttle / clock-event bit mask such as `0x0000000000000004` (or decimal), or null when unknown. */
export function parseThrottleMask(raw: string | undefined): number | null {
  const text = parseSmiText(raw);
  if (text === null) return null;
  try {
    if (/^0x[0-9a-f]+$/i.test(text)) return Number(BigInt(text) & 0xffffffffn);
    if (/^\d+$/.test(text)) return Number(BigInt(text) & 0xffffffffn);
  } catch {
    return null;
  }
  return null;
}

/** Splits one `--format=csv,noheader` line into trimmed cells. */
export function splitSmiCsv(line: string): string[] {
  return line.split(',').map((cell) => cell.trim());
}
