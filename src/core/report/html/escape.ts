import { stripControls } from '../../../shared/control-chars.js';

/** Text made safe for HTML content and attribute values (quoted either way); terminal and bidi controls removed. */
export function esc(text: string): string {
  return stripControls(String(text))
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** JSON made safe inside an inline <script> element (no "</script>", no HTML comment openers). */
export function scriptJson(value: unknown): string {
  return (
    JSON.stringify(value)
      .replace(/</g, '\\u003c')
      .replace(/\u2028/g, '\\u2028')
      .replace(/\u2029/g, '\\u2029')
      // C1 and bidi controls as escapes too: the data stays exact, the page's bytes carry no control.
      .replace(
        /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
        (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
      )
  );
}
