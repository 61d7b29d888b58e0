import { describeEngine } from '../../../shared/engines.js';
import type { EngineModule } from './types.js';

/**
 * Splits a command line the way a POSIX shell splits words (quotes and backslashes), and nothing more:
 * no variables, globs, pipes or redirections, because the argv is spawned directly, never through a shell.
 */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1] as string)) word += line[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new Error(`unclosed ${quote} quote in the command`);
  if (inWord) words.push(word);
  return words;
}

/** Any OpenAI-compatible server from an argv: `{port}`, `{host}` and `{model}` are filled in. */
export const commandEngine: EngineModule = {
  kind: 'command',
  description: describeEngine('command'),
  healthPath: '/health',
  progress: [],
  // Scraped when the server has it; a 404 only leaves engine telemetry unavailable.
  metricsPath: '/metrics',
  failures: [],
  spawnFix: 'check --cmd: its first word must be an executable on PATH or a path to one',
  plan(config, ctx) {
    const argv = config.command;
    if (!argv || argv.length === 0) throw new Error('--engine command needs --cmd "server command line"');
    const needsModel = argv.some((a) => a.includes('{model}'));
    if (needsModel && !config.model) throw new Error('the command uses {model}: pass --model');
    const fill = (a: string): string =>
      a
        .replaceAll('{port}', String(ctx.port))
        .replaceAll('{host}', ctx.host)
        .replaceAll('{model}', config.model ?? '');
    const [command, ...args] = argv.map(fill) as [string, ...string[]];
    const messages = argv.some((a) => a.includes('{port}'))
      ? []
      : [`the command has no {port}: servebench expects the server on port ${ctx.port}`];
    return {
      command,
      args: [...args, ...config.extraArgs],
      files: [],
      messages,
      healthPath: config.healthPath ?? '/health',
      ...(config.servedModelName ? { model: config.servedModelName } : config.model ? { model: config.model } : {}),
    };
  },
};
