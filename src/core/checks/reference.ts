import { checkApplies } from '../../shared/check-catalog.js';
import { POOLING_KINDS } from '../../shared/endpoint-kinds.js';
import { CHECKS } from './registry.js';

/** A limit's value as the reference shows it: shares (names ending in Share or Error, cv, confidence) as percentages. */
function limitText(name: string, value: number): string {
  const isShare = /(Share|Error)$|^(cv|confidence)$/.test(name);
  return `${name} ${isShare ? `${+(value * 100).toFixed(2)} %` : String(value)}`;
}

/** The list of checks in docs/checks.md, made from the registry: order, id, title, scope, what passing means, limits. */
export function renderChecksReference(): string {
  const rows = CHECKS.map((c) => {
    const limits = Object.entries(c.limits).map(([k, v]) => limitText(k, v));
    // A check that judges generated tokens is not shown for the endpoint kinds that generate none.
    const skipped = POOLING_KINDS.filter((k) => !checkApplies(c.id, k));
    const names = skipped.length > 1 ? `${skipped.slice(0, -1).join(', ')} and ${skipped.at(-1)}` : skipped.join('');
    const where = skipped.length > 0 ? ` (not shown for ${names})` : '';
    return `| \`${c.id}\` | ${c.title} | ${c.scope} | ${c.guards}${where} | ${limits.join(', ') || '—'} |`;
  });
  return ['| id | check | judges | passes when | limits |', '| --- | --- | --- | --- | --- |', ...rows].join('\n');
}
