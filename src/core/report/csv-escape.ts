import { stripControls } from '../../shared/control-chars.js';

/** A plain number (as the csv columns write them): never a formula, so left as it is for the spreadsheet. */
const PLAIN_NUMBER = /^-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/**
 * One CSV field: controls stripped; a text a spreadsheet would run as a formula (it starts with = + - @, a tab
 * or a CR) is prefixed with an apostrophe (OWASP's advice); quoted when it holds a comma, quote, newline or
 * edge spaces.
 */
export function csvCell(value: string): string {
  let text = stripControls(String(value));
  if (/^[=+\-@\t\r]/.test(text) && !PLAIN_NUMBER.test(text)) text = `'${text}`;
  return /[",\n\r]|^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
