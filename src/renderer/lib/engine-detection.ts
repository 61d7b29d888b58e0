import type { EngineDetection, EngineProbeRequest } from '../../shared/contract.js';
import { inAppWords } from '../../shared/fields.js';

/** Where the form's engine look-up stands. */
export type DetectionState =
  | { state: 'idle' }
  | { state: 'probing'; request: EngineProbeRequest }
  | { state: 'done'; request: EngineProbeRequest; detection: EngineDetection }
  | { state: 'failed'; request: EngineProbeRequest; error: string };

/** A line the form shows beside the Python / binary field. */
export interface DetectionLine {
  tone: 'ok' | 'bad' | 'info' | 'busy';
  text: string;
  /** A second, smaller line: why it was not found and the fix, or what its --help lists. */
  detail?: string;
}

/** The debounced look-up behind the form: the newest request wins, an older answer is dropped. */
export interface EngineProber {
  /** Asks for `request` once the field has been still for the delay; null (attach) stops asking. */
  update(request: EngineProbeRequest | null): void;
  dispose(): void;
}

export interface EngineProberOptions {
  /** Quiet time after the last keystroke before asking, ms (default 400). */
  delayMs?: number;
  /** Wait before asking again when the service was busy with other look-ups, ms (default 1000). */
  retryMs?: number;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
}

const keyOf = (r: EngineProbeRequest | null): string => (r ? JSON.stringify([r.engine, r.where]) : '');

/** Re-asks the service (debounced) whenever the engine or its Python / binary field changes. */
export function createEngineProber(
  probe: (request: EngineProbeRequest) => Promise<EngineDetection>,
  onState: (state: DetectionState) => void,
  options: EngineProberOptions = {},
): EngineProber {
  const delayMs = options.delayMs ?? 400;
  const retryMs = options.retryMs ?? 1000;
  const setTimer = options.setTimer ?? ((fn: () => void, ms: number) => setTimeout(fn, ms));
  const clearTimer = options.clearTimer ?? ((h: unknown) => clearTimeout(h as ReturnType<typeof setTimeout>));
  let current = '\u0000none';
  let timer: unknown;
  let seq = 0;
  let disposed = false;

  const ask = (request: EngineProbeRequest, mine: number): void => {
    probe(request).then(
      (detection) => {
        if (mine !== seq || disposed) return;
        if (detection.busy) {
          // Nothing was looked up: keep "looking for…" and ask again, rather than show the busy answer for good.
          timer = setTimer(() => {
            timer = undefined;
            ask(request, mine);
          }, retryMs);
          return;
        }
        onState({ state: 'done', request, detection });
      },
      (error: unknown) => {
        if (mine === seq && !disposed)
          onState({ state: 'failed', request, error: error instanceof Error ? error.message : String(error) });
      },
    );
  };

  return {
    update(request) {
      const key = keyOf(request);
      if (key === current || disposed) return;
      current = key;
      const mine = ++seq;
      if (timer !== undefined) clearTimer(timer);
      timer = undefined;
      if (!request) {
        onState({ state: 'idle' });
        return;
      }
      onState({ state: 'probing', request });
      timer = setTimer(() => {
        timer = undefined;
        ask(request, mine);
      }, delayMs);
    },
    dispose() {
      disposed = true;
      if (timer !== undefined) clearTimer(timer);
    },
  };
}

/** What the form says of the look-up: "vLLM 0.11.0", "not found: pip install vllm", "the built-in simulator ...". */
export function detectionLine(s: DetectionState, engineName: string): DetectionLine | null {
  switch (s.state) {
    case 'idle':
      return null;
    case 'probing':
      return { tone: 'busy', text: `looking for ${engineName}…` };
    case 'failed':
      return { tone: 'bad', text: `could not look for ${engineName}: ${s.error}` };
    case 'done': {
      const d = s.detection;
      if (!d.probed) return { tone: d.found ? 'info' : 'bad', text: d.message ?? d.name };
      if (d.found)
        return {
          tone: 'ok',
          text: `${d.name} ${d.version ?? ''}`.trim(),
          ...(d.quantizations?.length
            ? { detail: `${d.quantizations.length} quantization methods in its --help` }
            : {}),
        };
      return {
        tone: 'bad',
        text: `not found: ${d.installHint ?? 'install it'}`,
        // The service words its fix for the command line: the form names its own fields.
        ...(d.message ? { detail: inAppWords(d.fix ? `${d.message}; ${d.fix}` : d.message) } : {}),
      };
    }
  }
}

/** The installed engine's quantization methods for a select, or undefined (free text) when they were not read. */
export function installedQuantizations(s: DetectionState, engine: string): readonly string[] | undefined {
  if (s.state !== 'done' || s.request.engine !== engine) return undefined;
  const list = s.detection.found ? s.detection.quantizations : undefined;
  return list && list.length > 0 ? list : undefined;
}

/**
 * Why Start cannot work, when the look-up for exactly this engine and field already answered "not found"
 * (the launch would fail the same way); null while it is unknown or found.
 */
export function startRefusal(s: DetectionState, request: EngineProbeRequest | null, engineName: string): string | null {
  if (s.state !== 'done' || !request || keyOf(s.request) !== keyOf(request)) return null;
  if (!s.detection.probed || s.detection.found) return null;
  const line = detectionLine(s, engineName);
  return line ? [line.text, line.detail].filter(Boolean).join('; ') : null;
}
