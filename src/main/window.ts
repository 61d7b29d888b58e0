import { BrowserWindow, shell } from 'electron';

export interface WindowOptions {
  preload: string;
  /** Dev server URL (electron-vite dev), else the built index.html is loaded. */
  rendererUrl?: string;
  indexHtml: string;
}

/** The app window: isolated, sandboxed, no Node; links to the web open in the browser, navigation stays put. */
export function createMainWindow(options: WindowOptions): BrowserWindow {
  const win = new BrowserWindow({
    width: 1280,
    height: 800,
    minWidth: 960,
    minHeight: 600,
    show: false,
    title: 'servebench',
    backgroundColor: '#f8f9fb',
    webPreferences: {
      preload: options.preload,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
    },
  });
  win.once('ready-to-show', () => win.show());
  win.webContents.setWindowOpenHandler(({ url }) => {
    if (/^https?:\/\//.test(url)) void shell.openExternal(url);
    return { action: 'deny' };
  });
  win.webContents.on('will-navigate', (event, url) => {
    if (url !== win.webContents.getURL()) event.preventDefault();
  });
  if (options.rendererUrl) void win.loadURL(options.rendererUrl);
  else void win.loadFile(options.indexHtml);
  return win;
}
