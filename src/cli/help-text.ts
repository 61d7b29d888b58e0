/** Help is read in terminals of 80 columns: wider lines wrap mid-word there. */
const HELP_WIDTH = 80;

/** Words of `text` in lines of at most `width` (a longer word stays whole), the first after `head`, the rest after `indent`. */
function fill(head: string, text: string, indent: string, width: number): string[] {
  const lines: string[] = [];
  let line = head;
  let empty = true;
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (!empty && line.length + 1 + word.length > width) {
      lines.push(line);
      line = indent + word;
    } else line = empty ? line + word : `${line} ${word}`;
    empty = false;
  }
  lines.push(line);
  return lines;
}

/** Where an entry's text starts ("  --flag VALUE   text": the column of text), else the line's own indent. */
function hangingIndent(line: string): { head: string; text: string; indent: string } {
  const entry = /^( +\S+(?: \S+)*? {2,})(\S.*)$/.exec(line);
  if (entry) return { head: entry[1]!, text: entry[2]!, indent: ' '.repeat(entry[1]!.length) };
  const lead = /^ */.exec(line)![0];
  const usage = line.startsWith('Usage: ') ? ' '.repeat('Usage: '.length) : '';
  return { head: lead, text: line.slice(lead.length), indent: lead || usage };
}

/**
 * A help text fitted to `width` columns: unindented prose lines of one paragraph are joined and refilled, an
 * entry too wide ("  --flag V  text", or a sub-entry under it) wraps under its own text column. Headings (a line
 * ending with ':'), blank lines and lines that fit stay as written.
 */
export function wrapHelp(text: string, width = HELP_WIDTH): string {
  const src = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < src.length; i++) {
    const line = src[i]!;
    const prose = (l: string | undefined): boolean =>
      l !== undefined && l.trim() !== '' && !l.startsWith(' ') && !l.endsWith(':') && !l.startsWith('Usage: ');
    if (prose(line)) {
      let para = line;
      while (prose(src[i + 1])) para += ` ${src[++i]!}`;
      out.push(...(para.length > width ? fill('', para, '', width) : [para]));
      continue;
    }
    if (line.length <= width) {
      out.push(line);
      continue;
    }
    const { head, text: rest, indent } = hangingIndent(line);
    // A text column past half the width leaves too little room: wrap under the line's start instead.
    const hang = indent.length > width / 2 ? ' '.repeat(Math.min(indent.length, 8)) : indent;
    out.push(...fill(head, rest, hang, width));
  }
  return out.join('\n');
}
