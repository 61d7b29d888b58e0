import type { MenuItemConstructorOptions } from 'electron';

export interface MenuActions {
  openRunsFolder: () => void;
  newWindow: () => void;
  docs: () => void;
}

/** The application menu (template only, so it can be tested without Electron). */
export function menuTemplate(
  actions: MenuActions,
  platform: NodeJS.Platform = process.platform,
): MenuItemConstructorOptions[] {
  const mac = platform === 'darwin';
  return [
    ...(mac ? [{ role: 'appMenu' as const }] : []),
    {
      label: 'File',
      submenu: [
        { label: 'New Window', accelerator: 'CmdOrCtrl+N', click: actions.newWindow },
        { label: 'Open Runs Folder', accelerator: 'CmdOrCtrl+Shift+O', click: actions.openRunsFolder },
        { type: 'separator' },
        mac ? { role: 'close' } : { role: 'quit' },
      ],
    },
    { role: 'editMenu' },
    {
      label: 'View',
      submenu: [
        { role: 'reload' },
        { role: 'toggleDevTools' },
        { type: 'separator' },
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        { type: 'separator' },
        { role: 'togglefullscreen' },
      ],
    },
    { role: 'windowMenu' },
    { role: 'help', submenu: [{ label: 'servebench documentation', click: actions.docs }] },
  ];
}
