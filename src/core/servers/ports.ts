import { createServer } from 'node:net';

/** Result of trying to bind a port ourselves. */
export type PortCheck = { free: true; port: number } | { free: false; port: number; code: string };

/**
 * Binds host:port for a moment to learn whether it is free (port 0 = let the OS pick one).
 * Needed before launching vLLM: it binds with SO_REUSEPORT and would silently share a taken port.
 */
export function probePort(host: string, port: number): Promise<PortCheck> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', (error: NodeJS.ErrnoException) =>
      resolve({ free: false, port, code: error.code ?? 'EUNKNOWN' }),
    );
    server.listen({ host, port, exclusive: true }, () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : port;
      server.close(() => resolve({ free: true, port: bound }));
    });
  });
}

/** A free TCP port on host. */
export async function pickFreePort(host: string): Promise<number> {
  const check = await probePort(host, 0);
  if (!check.free) throw new Error(`cannot bind ${host}: ${check.code}`);
  return check.port;
}

/** The host to connect to for a bind address (0.0.0.0 and :: are not connectable everywhere). */
function connectHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '::1';
  return host;
}

/** http://host:port with IPv6 brackets. */
export function baseUrlFor(host: string, port: number): string {
  const h = connectHost(host);
  return `http://${h.includes(':') && !h.startsWith('[') ? `[${h}]` : h}:${port}`;
}
