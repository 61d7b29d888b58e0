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
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}
