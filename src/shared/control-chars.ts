/* eslint-disable no-control-regex -- matching control characters is what this module is for */
// Characters that steer a terminal or reorder text rather than show it. A server's error, a log line, a GPU
// name or a run folder's label may carry them; every place servebench shows such text strips them first.

/**
 * ESC sequences, whole: CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST), the string commands DCS, SOS, PM and
 * APC (ESC P/X/^/_ ... ST) and two-character escapes (ESC 7, ESC c ...). An ESC at the end stands alone.
 */
const ESCAPE_SEQUENCE = /\x1b(?:\[[0-?]*[ -/]*[@-~]?|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[PX^_][^\x1b]*(?:\x1b\\)?|[^\n])?/g;

/** C0 controls but tab and newline, DEL, C1 controls (0x9b is CSI on some terminals). */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/** Bidirectional overrides, embeddings, isolates and marks: they make text read in another order than it is. */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text with every terminal control removed: ESC sequences whole, C0 controls except tab and newline (a CR LF
 * becomes a newline; a lone CR, which rewrites the line, goes), DEL, C1 controls and bidi controls.
 */
export function stripControls(text: string): string {
  // The common case (plain text) costs one test.
  if (!/[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/.test(text)) return text;
  return text.replace(/\r\n/g, '\n').replace(ESCAPE_SEQUENCE, '').replace(CONTROL, '').replace(BIDI, '');
}
