import { ServerConfigSchema } from '../../../shared/config.js';
import { FIELDS, fieldByServerKey } from '../../../shared/fields.js';
import { ENGINES } from './registry.js';
import type { EngineModule } from './types.js';

const flagOf = (key: string | undefined): string | undefined => {
  const f = key ? fieldByServerKey(key) : undefined;
  return f ? `--${f.flag}${f.metavar ? ` ${f.metavar}` : ''}` : undefined;
};

const foundBy = (e: EngineModule): string => {
  const where = flagOf(e.probeSetting);
  if (e.probe?.type === 'python') return `\`PYTHON -c "import ${e.probe.pkg}"\` (\`${where ?? '--python'}\`)`;
  if (e.probe?.type === 'binary') return `\`${e.probe.versionArgs.join(' ')}\` of the binary (\`${where}\`)`;
  if (!e.launches) return 'nothing launched';
  if (e.simulated) return 'built in';
  const given = flagOf(e.required?.[0]);
  return given ? `the \`${given.split(' ')[0]}\` argv` : 'its command';
};

const readyWhen = (e: EngineModule): string => {
  if (!e.launches) return '`/health` is 200, or `/v1/models` when there is no `/health`';
  const own = 'healthPath' in e.settings ? flagOf('healthPath')?.split(' ')[0] : undefined;
  const health = own ? `\`${own}\` (default \`${e.healthPath}\`)` : `\`${e.healthPath}\``;
  return `${health} is 200${e.readyLine ? ' and the ready line was logged' : ''}`;
};

const metrics = (e: EngineModule): string => {
  const names = Object.values(e.metricNames ?? {}).flat();
  const prefix = names
    .map((n) => /^[a-z]+[:_]/.exec(typeof n === 'string' ? n : n.name)?.[0])
    .find((p): p is string => p !== undefined);
  if (prefix) return `\`${prefix}*\`${e.metricsPath && e.metricsPath !== '/metrics' ? ` at \`${e.metricsPath}\`` : ''}`;
  return e.metricsPath ? `scraped when it has \`${e.metricsPath}\`` : 'none';
};

/** A table in prettier's layout: a header, its rule and the rows, each column as wide as its widest cell. */
function markdownTable(table: string[][]): string {
  // A pipe inside a cell would end it.
  const rows = table.map((r) => r.map((c) => c.replace(/\|/g, '\\|')));
  const widths = rows[0]!.map((_, i) => Math.max(3, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(rows[0]!), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...rows.slice(1).map(line)].join('\n');
}

/** The command an engine's plan makes of a bare config (model M on host H, port P), or undefined without one. */
function command(e: EngineModule): string | undefined {
  if (!e.launches) return undefined;
  const config = ServerConfigSchema.parse({
    engine: e.kind,
    model: 'M',
    ...('python' in e.settings ? { python: 'PYTHON' } : {}),
  });
  try {
    const plan = e.plan(config, {
      host: 'H',
      port: 0,
      runDir: 'RUN',
      cliScript: () => 'dist/cli.js',
      nodePath: 'node',
    });
    return `\`${[plan.command, ...plan.args].join(' ').replace(/ 0(?= |$)/, ' P')} ...\``;
  } catch {
    return undefined;
  }
}

/** The docs' table of engines (docs/servers.md), rendered from the registry. */
export function renderEngineTable(): string {
  return markdownTable([
    ['engine', 'name', 'command (an argv, never a shell)', 'found by', 'ready when', 'metrics', 'install'],
    ...(ENGINES as readonly EngineModule[]).map((e) => [
      `\`${e.kind}\``,
      e.description.name,
      command(e) ?? (e.launches ? foundBy(e) : 'none: a server someone else runs'),
      foundBy(e),
      readyWhen(e),
      metrics(e),
      e.description.install.startsWith('pip ') ? `\`${e.description.install}\`` : e.description.install,
    ]),
  ]);
}

const code = (native: string): string => (native.startsWith('-') ? `\`${native}\`` : native);

/**
 * The docs' option mapping (docs/servers.md): each server setting and what every engine that launches makes of it,
 * from the engine modules' own declarations. Settings every engine takes alike (host, port, environment) are left out.
 */
export function renderOptionTable(): string {
  const engines = (ENGINES as readonly EngineModule[]).filter((e) => e.launches);
  const keys = [
    ...new Set(
      FIELDS.filter((f) => f.path.startsWith('server.') && f.path !== 'server.engine').map(
        (f) => f.path.split('.')[1] as string,
      ),
    ),
  ];
  const rows = keys.flatMap((key) => {
    const natives = engines.map((e) => (e.settings[key] as { native?: string } | undefined)?.native ?? '');
    if (natives.every((n) => n === natives[0])) return [];
    const flags = FIELDS.filter((f) => f.path === `server.${key}` || f.path.startsWith(`server.${key}.`)).map(
      (f) => `--${f.flag}`,
    );
    return [[`\`${key}\` ${flags.map((f) => `\`${f}\``).join(' ')}`, ...natives.map(code)]];
  });
  return markdownTable([['setting', ...engines.map((e) => e.description.name)], ...rows]);
}
