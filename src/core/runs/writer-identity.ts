import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { RunRecord, RunWriterIdentity } from '../../shared/run-record.js';
import { isProcessAlive } from '../servers/process-group.js';

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * A key that names one process for its whole life: boot id plus its start time in clock ticks
 * (/proc/<pid>/stat field 22). A pid can be reused; this key cannot. Undefined where there is no /proc.
 */
function processStartKey(pid: number): string | undefined {
  const stat = readText(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const start = fields[19];
  if (!start || !/^\d+$/.test(start)) return undefined;
  const boot = readText('/proc/sys/kernel/random/boot_id')?.trim() ?? '';
  return `${boot}/${start}`;
}

let self: RunWriterIdentity | undefined;

/** This process as the writer of a run folder (recorded in run.json). */
export function currentWriter(): RunWriterIdentity {
  if (!self) {
    const start = processStartKey(process.pid);
    self = { pid: process.pid, hostname: hostname(), ...(start ? { processStart: start } : {}) };
  }
  return self;
}

/** How a reader learns whether a process still lives (tests pass a fake). */
export interface ProcessProbe {
  hostname: string;
  alive(pid: number): boolean;
  startKey(pid: number): string | undefined;
}

const localProbe: ProcessProbe = {
  hostname: hostname(),
  alive: isProcessAlive,
  startKey: processStartKey,
};

/**
 * True when the process that was writing a 'running' run is gone (killed, crashed, machine rebooted).
 * False when it lives, or when this cannot be known (no writer recorded, or written on another host).
 */
function writerGone(writer: RunWriterIdentity | undefined, probe: ProcessProbe = localProbe): boolean {
  if (!writer || writer.hostname !== probe.hostname) return false;
  if (!probe.alive(writer.pid)) return true;
  // The pid lives: the same process only if it started when the writer did (pids are reused).
  if (writer.processStart === undefined) return false;
  const now = probe.startKey(writer.pid);
  return now !== undefined && now !== writer.processStart;
}

/**
 * The record as a reader should see it: a run still marked 'running' whose writer is gone is
 * 'interrupted' (nothing will finish it), with the reason in `error`. Other records come back as they are.
 */
export function withLiveStatus(record: RunRecord, probe: ProcessProbe = localProbe): RunRecord {
  if (record.status !== 'running' || !writerGone(record.writer, probe)) return record;
  return {
    ...record,
    status: 'interrupted',
    error:
      `the process writing this run (pid ${record.writer?.pid}) ended without finishing it ` +
      '(killed, e.g. by the OOM killer, or crashed); the levels saved before are kept',
  };
}
