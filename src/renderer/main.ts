import { mount } from 'svelte';
import App from './App.svelte';
import './app.css';
import { createApi, pickTransport } from './lib/transport.js';

// IPC in Electron (preload put window.servebench there), else the WebSocket of `servebench ui`.
const statusListeners = new Set<(connected: boolean) => void>();
const transport = pickTransport(window, { onStatus: (up) => statusListeners.forEach((l) => l(up)) });
const api = createApi(transport);

export const app = mount(App, {
  target: document.getElementById('app') as HTMLElement,
  props: {
    api,
    transport,
    onConnection: (listener: (connected: boolean) => void) => {
      statusListeners.add(listener);
      return () => {
        statusListeners.delete(listener);
      };
    },
  },
});
