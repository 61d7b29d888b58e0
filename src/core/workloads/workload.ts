import type { BenchConfig } from '../../shared/config.js';
import { isPooling } from '../../shared/endpoint-kinds.js';
import { UserError } from '../errors.js';
import type { LevelPlan } from '../load/level-plan.js';
import { planLevels } from '../load/level-plan.js';
import { levelRequests } from '../load/plan-limits.js';
import { readPromptFile, type FileEntry } from './prompt-file.js';
import { loadStructured, type StructuredSpec } from './structured-spec.js';
import { readTrace, tracePlan, type TraceEntry } from './trace.js';

/**
 * What a run's prompts are made from: fixed-length synthetic prompts (the default) or one of the workloads; and what
 * every answer must be (--response-format, --tools), whatever the prompts.
 */
export type Workload = PromptSource & { structured?: StructuredSpec };

type PromptSource =
  | { kind: 'synthetic' }
  | {
      kind: 'file';
      path: string;
      entries: FileEntry[];
      promptLengths: 'fixed' | 'file';
      outputLengths: 'fixed' | 'file';
    }
  | { kind: 'shared-prefix'; groups: number; prefixLen: number }
  | { kind: 'trace'; path: string; entries: TraceEntry[]; plan: LevelPlan };

/** Most prompts read from a file when the run's count is open (a capacity search). */
const OPEN_COUNT = 100_000;

/** Embeddings and rerank batch synthetic inputs of the level's exact length: the other workloads are generation's. */
function poolingProblem(config: BenchConfig, file: boolean, trace: boolean, prefix: boolean): string | null {
  if (!isPooling(config.api)) {
    return config.batchSize > 1 ? `--batch-size applies to --api embeddings or rerank: drop it, or pick one` : null;
  }
  const other =
    (config.turns ?? 1) > 1 ? '--turns' : file ? '--prompts' : trace ? '--trace' : prefix ? '--prefix-groups' : null;
  return other ? `--api ${config.api} batches inputs of --input-len tokens: drop ${other}` : null;
}

/** One line when the workload settings contradict each other or the sweep; null when they make sense. */
export function workloadProblem(config: BenchConfig): string | null {
  const file = config.prompts !== undefined;
  const trace = config.trace !== undefined;
  const prefix = config.prefixGroups !== undefined || config.prefixLen !== undefined;
  if (file && trace) return '--prompts and --trace are two workloads: pass one of them';
  const pooled = poolingProblem(config, file, trace, prefix);
  if (pooled) return pooled;
  // A conversation's turns are synthetic user messages; the other workloads bring prompts of their own.
  if ((config.turns ?? 1) > 1 && (file || trace || prefix))
    return `--turns makes its own conversations: drop --turns, or drop ${file ? '--prompts' : trace ? '--trace' : '--prefix-groups/--prefix-len'}`;
  if (prefix && (file || trace))
    return `--prefix-groups makes its own prompts: drop it, or drop ${file ? '--prompts' : '--trace'}`;
  if (!file && config.promptLengths !== undefined)
    return '--prompt-lengths applies to --prompts FILE: add --prompts or drop it';
  if (!file && config.outputLengths !== undefined)
    return '--output-lengths applies to --prompts FILE: add --prompts or drop it';
  if (!trace && config.traceSpeed !== undefined) return '--trace-speed applies to --trace FILE: add --trace or drop it';
  if ((config.turns ?? 1) <= 1 && (config.thinkTimeMs ?? 0) > 0)
    return '--think-time-ms is the pause between the turns of a conversation: add --turns K (2 or more) or drop it';
  if (prefix) {
    if (config.prefixGroups === undefined)
      return '--prefix-len needs --prefix-groups N (how many groups share a prefix)';
    if (config.prefixLen === undefined)
      return '--prefix-groups needs --prefix-len P (tokens of the shared system prompt)';
    const shortest = Math.min(...config.inputLen);
    if (config.prefixLen >= shortest) {
      return `--prefix-len ${config.prefixLen} must be shorter than --input-len ${shortest}: each request needs a unique part after the shared prefix`;
    }
    if (!config.uniquePrefix)
      return '--no-unique-prefix repeats one prompt: it cannot go with --prefix-groups; drop one';
  }
  if (trace) {
    if (config.rate && config.rate.length > 0) return '--trace sets its own arrival times: drop --rate';
    if (config.findCapacity)
      return '--trace replays its own fixed load, while --find-capacity chooses the loads: drop one of them';
    if (config.inputLen.length > 1 || config.outputLen.length > 1)
      return "--trace takes each request's lengths from the file: drop the --input-len/--output-len lists";
  }
  if (file && !config.uniquePrefix)
    return '--no-unique-prefix repeats one synthetic prompt: it cannot go with --prompts';
  return null;
}

/** Prompt-file records one server configuration takes: every configuration of a sweep replays the same ones. */
function requestsNeeded(config: BenchConfig): number {
  if (config.findCapacity) return OPEN_COUNT;
  return planLevels(config).reduce((sum, p) => sum + levelRequests(p), 0);
}

/**
 * Checks the workload settings and reads their file, before any run folder exists: the prompt file up to the prompts
 * the run sends, or the whole trace (and its level). One UserError line on any problem.
 */
export async function loadWorkload(config: BenchConfig): Promise<Workload> {
  const problem = workloadProblem(config);
  if (problem) throw new UserError(problem);
  const source = await loadPromptSource(config);
  const structured = await loadStructured(config);
  return structured ? { ...source, structured } : source;
}

async function loadPromptSource(config: BenchConfig): Promise<PromptSource> {
  if (config.prompts !== undefined) {
    const entries = await readPromptFile(config.prompts, requestsNeeded(config));
    if (config.api === 'completions') {
      const chat = entries.find((e) => e.messages);
      if (chat) {
        throw new UserError(
          `--prompts ${config.prompts}: record ${chat.sourceIndex + 1} has "messages", which only the chat API takes: drop --api completions`,
        );
      }
    }
    return {
      kind: 'file',
      path: config.prompts,
      entries,
      promptLengths: config.promptLengths ?? 'fixed',
      outputLengths: config.outputLengths ?? 'fixed',
    };
  }
  if (config.prefixGroups !== undefined && config.prefixLen !== undefined) {
    return { kind: 'shared-prefix', groups: config.prefixGroups, prefixLen: config.prefixLen };
  }
  if (config.trace !== undefined) {
    const entries = await readTrace(config.trace);
    return { kind: 'trace', path: config.trace, entries, plan: tracePlan(config, entries) };
  }
  return { kind: 'synthetic' };
}

/** Prompts taken from a file as they are written: they share what real prompts share (chat template, openings). */
export function promptsFromFile(workload: Workload): boolean {
  return workload.kind === 'file';
}

/** A level's lengths are each request's own (a prompt file read with file lengths): the level shows their mean. */
export function ownLengths(workload: Workload): { input: boolean; output: boolean } {
  return workload.kind === 'file'
    ? { input: workload.promptLengths === 'file', output: workload.outputLengths === 'file' }
    : { input: false, output: false };
}

/** Whether requests share prompt prefixes on purpose (shared-prefix groups, a trace's hash ids). */
export function sharesPrefixes(workload: Workload): boolean {
  return workload.kind === 'shared-prefix' || workload.kind === 'trace';
}
