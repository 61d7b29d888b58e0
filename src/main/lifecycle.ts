/** The part of Electron's `app` the quit guard uses. */
export interface QuitApp {
  on(event: 'before-quit', listener: (event: { preventDefault(): void }) => void): unknown;
  quit(): void;
}

/**
 * Holds the first quit until the engine has cancelled the active run, saved it and stopped its servers
 * (nothing may outlive the app), then quits for real. `onStopping` lets the windows say what is happening.
 */
export function installQuitGuard(app: QuitApp, engine: { shutdown(): Promise<void> }, onStopping?: () => void): void {
  let state: 'running' | 'stopping' | 'done' = 'running';
  app.on('before-quit', (event) => {
    if (state === 'done') return;
    event.preventDefault();
    if (state === 'stopping') return;
    state = 'stopping';
    onStopping?.();
    void engine
      .shutdown()
      .catch(() => undefined)
      .finally(() => {
        state = 'done';
        app.quit();
      });
  });
}
