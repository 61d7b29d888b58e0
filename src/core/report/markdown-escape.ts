import { stripControls } from '../../shared/control-chars.js';

// Every string from outside (labels, model names, versions, check details, messages, server errors) reaches a
// Markdown export through here. Markdown passes raw HTML through and turns brackets into links and images: the
// text is made inert for any CommonMark or GitHub renderer, and one line (a table cell or a list item).

/** Markdown punctuation that starts inline syntax: escapes, code, emphasis, a link's or image's `](`, cells, strikethrough. */
const MD_SPECIAL = /[\\`*_|~]|\](?=[([])/g;
const WORD = /[\p{L}\p{N}]/u;

/**
 * Text shown as itself in Markdown, on one line: controls stripped, newlines made spaces, `& < >` as entities
 * (no HTML reaches the renderer), and Markdown's punctuation backslash-escaped (pipes too, for tables).
 */
export function mdText(text: string): string {
  return (
    stripControls(String(text))
      .replace(/[\n\t]+/g, ' ')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(MD_SPECIAL, (c, at: number, all: string) =>
        // An underscore inside a word (tpot_p95, Llama_3) starts no emphasis in CommonMark: left as written. A
        // bracket makes a link or an image only as `](` or `][` (no foreign text starts a line, so none can define
        // a reference): `[580, 650]` stays as it reads.
        c === '_' && WORD.test(all[at - 1] ?? '') && WORD.test(all[at + 1] ?? '') ? c : `\\${c}`,
      )
      // GitHub's renderer links bare URLs, www. names and e-mail addresses: an escape inside each keeps it text.
      .replace(/:\/\//g, '\\://')
      .replace(/\bwww\./gi, (w) => `${w.slice(0, 3)}\\.`)
      .replace(/@/g, '\\@')
  );
}

/**
 * Text as a fenced code block: a fence longer than any run of backticks in it (so the text cannot close it),
 * controls stripped. Inside a code block a renderer shows HTML and Markdown as they are.
 */
export function mdCodeBlock(text: string): string[] {
  const clean = stripControls(String(text));
  const longest = Math.max(0, ...(clean.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return [fence, clean, fence];
}
