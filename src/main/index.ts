import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BrowserWindow, Menu, app, dialog, safeStorage, shell, utilityProcess } from 'electron';
import { createRunActions } from '../core/runs/run-actions.js';
import { createSettingsStore, readSettingsSync } from '../core/settings/settings-store.js';
import type { ActiveRun } from '../shared/contract.js';
import { safeStorageCipher } from './secret-cipher.js';
import type { EngineProcess } from './engine-client.js';
import { createEngineClient } from './engine-client.js';
import { RUNS_DIR_ENV } from './engine-protocol.js';
import { EVENT_CHANNEL } from '../preload/bridge.js';
import { registerExportIpc } from './export-ipc.js';
import { registerContractIpc } from './ipc.js';
import { installQuitGuard } from './lifecycle.js';
import { menuTemplate } from './menu.js';
import { createFilePicker } from './pick-file.js';
import { printHtmlToPdf } from './print-pdf.js';
import { createMainWindow } from './window.js';

// Main stays thin: windows, menu, lifecycle. The engine lives in a utility process; ipc.ts relays the contract.
const here = dirname(fileURLToPath(import.meta.url));
// The runs folder: the environment's, else the one saved in the settings, else Documents/servebench/runs.
const runsDir =
  process.env[RUNS_DIR_ENV] ??
  readSettingsSync(app.getPath('userData')).runsDir ??
  join(app.getPath('documents'), 'servebench', 'runs');
// out/main/ -> the package's docs/app.md.
const docsFile = join(here, '..', '..', 'docs', 'app.md');

if (!app.requestSingleInstanceLock()) {
  // One GPU, one benchmark at a time: a second copy hands over to the first.
  app.quit();
} else {
  const engine = createEngineClient(
    () =>
      utilityProcess.fork(join(here, 'engine-host.js'), [], {
        serviceName: 'servebench engine',
        env: { ...process.env, [RUNS_DIR_ENV]: runsDir },
        stdio: 'inherit',
      }) as unknown as EngineProcess,
  );

  const openWindow = (): BrowserWindow =>
    createMainWindow({
      preload: join(here, '../preload/index.cjs'),
      rendererUrl: app.isPackaged ? undefined : process.env.ELECTRON_RENDERER_URL,
      indexHtml: join(here, '../renderer/index.html'),
    });
  const ours = (): Electron.WebContents[] => BrowserWindow.getAllWindows().map((w) => w.webContents);

  installQuitGuard(app, engine, () =>
    // Say why the window lingers: the run is being cancelled and saved, the server stopped.
    ours().forEach((wc) =>
      wc.send(EVENT_CHANNEL, {
        type: 'message',
        severity: 'info',
        text: 'quitting: cancelling the run, saving it and stopping the server…',
      }),
    ),
  );

  app.on('second-instance', () => {
    const win = BrowserWindow.getAllWindows()[0];
    if (win) {
      if (win.isMinimized()) win.restore();
      win.focus();
    }
  });

  void app.whenReady().then(() => {
    mkdirSync(runsDir, { recursive: true });
    const trusted = (event: Electron.IpcMainInvokeEvent): boolean => ours().some((wc) => wc.id === event.sender.id);
    const settings = createSettingsStore({
      dir: app.getPath('userData'),
      cipher: safeStorageCipher(safeStorage, process.platform),
      runsDir,
      onWarning: (line) => console.warn(`servebench: ${line}`),
    });
    const runActions = createRunActions({
      outDir: runsDir,
      trash: (path) => shell.trashItem(path),
      openPath: (path) => shell.openPath(path),
      activeRunId: async () => {
        const outcome = await engine.call('activeRun', []);
        return outcome.ok ? ((outcome.result as ActiveRun | null)?.runId ?? null) : null;
      },
    });
    const local = {
      getSettings: () => settings.getSettings(),
      saveSettings: settings.saveSettings,
      deleteRun: runActions.deleteRun,
      openRunFolder: runActions.openRunFolder,
      // The dialog sits on the window that asked (the focused one), else stands alone.
      pickFile: createFilePicker((options) => {
        const win = BrowserWindow.getFocusedWindow();
        return win ? dialog.showOpenDialog(win, options) : dialog.showOpenDialog(options);
      }).pickFile,
    };
    registerContractIpc({ engine, targets: ours, trusted, local });
    registerExportIpc({
      engine,
      trusted,
      printPdf: printHtmlToPdf,
      choosePath: async (event, name) => {
        const options = { defaultPath: join(app.getPath('downloads'), name) };
        const win = BrowserWindow.fromWebContents(event.sender);
        const chosen = win ? await dialog.showSaveDialog(win, options) : await dialog.showSaveDialog(options);
        return chosen.canceled ? undefined : chosen.filePath;
      },
    });
    Menu.setApplicationMenu(
      Menu.buildFromTemplate(
        menuTemplate({
          openRunsFolder: () => void shell.openPath(runsDir),
          newWindow: () => void openWindow(),
          docs: () => void shell.openPath(docsFile),
        }),
      ),
    );
    openWindow();
    app.on('activate', () => {
      if (BrowserWindow.getAllWindows().length === 0) openWindow();
    });
  });

  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });
}
