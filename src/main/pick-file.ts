import { dirname } from 'node:path';
import type { OpenDialogOptions } from 'electron';
import type { FilePurpose, PickFileRequest, PickedFile } from '../shared/contract.js';

/** The open dialog (Electron's dialog.showOpenDialog on the focused window); tests pass a fake. */
export type ShowOpenDialog = (options: OpenDialogOptions) => Promise<{ canceled: boolean; filePaths: string[] }>;

const TITLES: Record<FilePurpose, { title: string; filter: string }> = {
  prompts: { title: 'Choose a prompt file', filter: 'Prompts (JSONL, ShareGPT JSON)' },
  trace: { title: 'Choose a trace to replay', filter: 'Mooncake trace (JSONL)' },
};

/** The dialog's options for a purpose: one file, .jsonl/.json first, any file on request; `from` the folder it opens in. */
export function openDialogOptions(purpose: FilePurpose, from?: string): OpenDialogOptions {
  const { title, filter } = TITLES[purpose];
  return {
    title,
    properties: ['openFile'],
    filters: [
      { name: filter, extensions: ['jsonl', 'json'] },
      { name: 'All files', extensions: ['*'] },
    ],
    ...(from ? { defaultPath: from } : {}),
  };
}

/** Main's answer to pickFile: the open dialog, reopened in the folder of the last file picked. */
export function createFilePicker(show: ShowOpenDialog): { pickFile(request: PickFileRequest): Promise<PickedFile> } {
  let lastFolder: string | undefined;
  return {
    async pickFile({ purpose }) {
      const chosen = await show(openDialogOptions(purpose, lastFolder));
      const path = chosen.canceled ? undefined : chosen.filePaths[0];
      if (!path) return { path: null };
      lastFolder = dirname(path);
      return { path };
    },
  };
}
