import { ENGINE_FACTS } from '../shared/engines.js';
import { fieldDefault, fieldText, limitWords, takes } from '../shared/field-values.js';
import type { FieldDescriptor } from '../shared/fields.js';
import { natives, type HelpSection } from './field-flags.js';
import { DISTRIBUTED_SECTION } from './distributed-options.js';
import { BENCH_SECTIONS } from './run-options.js';
import { SERVER_SECTIONS } from './server-options.js';

/** A Markdown table cell: pipes escaped, one line. */
const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();

const left = (f: FieldDescriptor): string =>
  `\`--${f.flag}${f.metavar ? ` ${f.metavar}` : ''}\`${f.off ? ` / \`--${f.off}\`` : ''}`;

const engineNames = (f: FieldDescriptor): string =>
  f.engines === undefined || f.engines.length === ENGINE_FACTS.length
    ? 'all'
    : ENGINE_FACTS.filter((e) => f.engines?.includes(e.kind))
        .map((e) => e.name)
        .join(', ');

function row(f: FieldDescriptor, withEngines: boolean): string {
  const d = f.type === 'switch' ? undefined : fieldDefault(f);
  const own = withEngines ? natives(f) : '';
  const what = `${f.help}${own ? ` (${own})` : ''}${f.appSetsIt ? `; the app: ${f.appSetsIt}` : ''}`;
  const bound = limitWords(f);
  const value = f.type === 'switch' ? 'a switch' : `${takes(f)}${bound ? `; ${bound}` : ''}`;
  const cells = [left(f), value, d === undefined ? '' : `\`${fieldText(f, d)}\``, what];
  if (withEngines) cells.push(engineNames(f));
  return `| ${cells.map(cell).join(' | ')} |`;
}

function section(s: HelpSection, server: boolean): string {
  const head = server ? '| flag | takes | default | what | engines |' : '| flag | takes | default | what |';
  const rule = server ? '| --- | --- | --- | --- | --- |' : '| --- | --- | --- | --- |';
  const extra = (s.extra ?? []).map(([l, t]) => `| \`${l}\` | | | ${cell(t)} |${server ? ' |' : ''}`);
  return [`### ${s.title}`, '', head, rule, ...s.fields.map((f) => row(f, server)), ...extra].join('\n');
}

/**
 * The `servebench run` reference of docs/cli.md, made from the settings' declarations: every flag with what it
 * takes (its schema's bounds in words), its default, its help and the engines that have it.
 */
export function renderCliReference(): string {
  return [
    ...BENCH_SECTIONS.map((s) => section(s, false)),
    ...SERVER_SECTIONS.map((s) => section(s, true)),
    section(DISTRIBUTED_SECTION, false),
  ].join('\n\n');
}
