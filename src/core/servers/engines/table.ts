import { ENGINES } from './index.js';
import type { EngineModule } from './types.js';

const foundBy = (e: EngineModule): string => {
  if (e.probe?.type === 'python') return `\`PYTHON -c "import ${e.probe.pkg}"\` (\`--python\`)`;
  if (e.probe?.type === 'binary') return `\`${e.probe.versionArgs.join(' ')}\` of the binary (\`${e.probe.flag}\`)`;
  return e.kind === 'command' ? 'the `--cmd` argv' : e.kind === 'sim' ? 'built in' : 'nothing launched';
};

const readyWhen = (e: EngineModule): string => {
  if (e.kind === 'attach') return '`/health` is 200, or `/v1/models` when there is no `/health`';
  const health = e.kind === 'command' ? '`--health` (default `/health`)' : `\`${e.healthPath}\``;
  return `${health} is 200${e.readyLine ? ' and the ready line was logged' : ''}`;
};

const metrics = (e: EngineModule): string => {
  const names = Object.values(e.metricNames ?? {}).flat();
  const prefix = names
    .map((n) => (typeof n === 'string' ? n : n.name).split(':')[0])
    .find((p): p is string => p !== undefined);
  if (prefix) return `\`${prefix}:*\``;
  return e.metricsPath ? 'scraped when it has `/metrics`' : 'none';
};

/** The docs' table of engines (docs/servers.md), rendered from the registry in prettier's table layout. */
export function renderEngineTable(): string {
  const rows = [
    ['engine', 'name', 'found by', 'ready when', 'metrics', 'install'],
    ...ENGINES.map((e) => [
      `\`${e.kind}\``,
      e.description.name,
      foundBy(e),
      readyWhen(e),
      metrics(e),
      e.description.install.startsWith('pip ') ? `\`${e.description.install}\`` : e.description.install,
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(3, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(rows[0]!), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...rows.slice(1).map(line)].join('\n');
}
