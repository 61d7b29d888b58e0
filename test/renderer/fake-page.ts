import { vi } from 'vitest';
import type { ExportPage } from '../../src/renderer/lib/export-run.js';

/** The parts of a page Export and Compare use, recording the elements made and the blobs handed out. */
export function fakePage(url = 'blob:x') {
  const made: Array<Record<string, unknown>> = [];
  const blobs: Blob[] = [];
  const page = {
    document: {
      body: { append: vi.fn() },
      createElement: (tag: string) => {
        const el: Record<string, unknown> = { tag, style: {}, click: vi.fn(), remove: vi.fn() };
        el.setAttribute = vi.fn();
        el.addEventListener = vi.fn();
        made.push(el);
        return el;
      },
    },
    URL: {
      createObjectURL: (blob: Blob) => {
        blobs.push(blob);
        return url;
      },
      revokeObjectURL: vi.fn(),
    },
  };
  return { page: page as unknown as ExportPage, made, blobs };
}
