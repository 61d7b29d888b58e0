import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** The file under `root` a URL path names, or null when it would leave `root`. */
export function resolveStaticPath(root: string, urlPath: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath.split('?')[0] ?? '/');
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const rel = normalize(decoded === '/' || decoded === '' ? '/index.html' : decoded).replace(/^[/\\]+/, '');
  const base = resolve(root);
  const file = resolve(base, rel);
  if (file !== base && !file.startsWith(base + sep)) return null;
  return file;
}

/** Serves the built renderer: GET/HEAD of files under `root`, nothing else. */
export async function serveStatic(root: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD' }).end();
    return;
  }
  const file = resolveStaticPath(root, req.url ?? '/');
  const info = file ? await stat(file).catch(() => null) : null;
  const path = info?.isDirectory() && file ? join(file, 'index.html') : file;
  const final = path && info ? await stat(path).catch(() => null) : null;
  if (!path || !final?.isFile()) {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
    return;
  }
  res.writeHead(200, {
    'content-type': TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream',
    'content-length': final.size,
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
    // The page's address may still carry ?token= when it loads: never hand it to another site.
    'referrer-policy': 'no-referrer',
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  createReadStream(path).pipe(res);
}
