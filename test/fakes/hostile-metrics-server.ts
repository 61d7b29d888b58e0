import { createServer } from 'node:http';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What GET /metrics answers. */
export type MetricsMode =
  /** A small, truthful vLLM page. */
  | 'honest'
  /** vLLM's names with values no engine has: NaN, +Inf, -Inf, a negative count, a KV usage of 1e308, hits above queries. */
  | 'lies'
  /** A 24 MB page of well-formed histogram lines (a flood within the format). */
  | 'huge-page'
  /** A 6 MB page of well-formed histogram lines: big, yet within what servebench reads. */
  | 'big-page'
  /** One 20 MB line. */
  | 'huge-line'
  /** One 1 MB line inside an otherwise small page. */
  | 'long-line'
  /** A body that never ends, as fast as the client reads. */
  | 'endless'
  /** A body that never ends, a few bytes every 100 ms (never a whole page in any time-out). */
  | 'drip';

export interface MetricsServer {
  url: string;
  /** Body bytes written so far, over all scrapes. */
  bytesSent(): number;
  /** Scrapes received. */
  scrapes(): number;
  /** Scrapes whose connection the client closed before the body ended. */
  abandoned(): number;
  close(): Promise<void>;
}

const HONEST = [
  '# TYPE vllm:num_requests_running gauge',
  'vllm:num_requests_running{model_name="m"} 2.0',
  'vllm:num_requests_waiting{model_name="m"} 0.0',
  'vllm:kv_cache_usage_perc{model_name="m"} 0.25',
  'vllm:num_preemptions_total{model_name="m"} 0.0',
  'vllm:prefix_cache_queries_total{model_name="m"} 1000.0',
  'vllm:prefix_cache_hits_total{model_name="m"} 10.0',
  '',
].join('\n');

const LIES = [
  'vllm:num_requests_running{model_name="m"} NaN',
  'vllm:num_requests_waiting{model_name="m"} -3.0',
  'vllm:kv_cache_usage_perc{model_name="m"} 1e308',
  'vllm:num_preemptions_total{model_name="m"} +Inf',
  'vllm:prefix_cache_queries_total{model_name="m"} 10.0',
  'vllm:prefix_cache_hits_total{model_name="m"} 5000.0',
  'vllm:generation_tokens_total{model_name="m"} -Inf',
  '',
].join('\n');

const BUCKETS = 'vllm:e2e_request_latency_seconds_bucket{le="0.5",model_name="m"} 1.0\n'.repeat(1000);

/** Starts a /metrics stand-in on a free loopback port. */
export async function startMetricsServer(mode: MetricsMode): Promise<MetricsServer> {
  let sent = 0;
  let scrapes = 0;
  let abandoned = 0;
  const live = new Set<ServerResponse>();

  /** Writes pieces until `total` bytes (Infinity: until the client goes), honouring back-pressure. */
  const pump = (res: ServerResponse, piece: string, total: number): void => {
    let written = 0;
    const next = (): void => {
      while (!res.destroyed && written < total) {
        written += piece.length;
        sent += piece.length;
        if (!res.write(piece)) {
          res.once('drain', next);
          return;
        }
      }
      if (!res.destroyed) res.end();
    };
    next();
  };

  const server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.statusCode = 404;
      res.end('Not Found');
      return;
    }
    scrapes++;
    live.add(res);
    res.on('close', () => {
      live.delete(res);
      if (!res.writableFinished) abandoned++;
    });
    res.setHeader('content-type', 'text/plain; version=0.0.4');
    switch (mode) {
      case 'honest':
      case 'lies': {
        const body = mode === 'honest' ? HONEST : LIES;
        sent += body.length;
        res.end(body);
        return;
      }
      case 'huge-page':
      case 'big-page':
        res.write(HONEST);
        return pump(res, BUCKETS, mode === 'huge-page' ? 24e6 : 6e6);
      case 'huge-line':
        res.write(HONEST);
        return pump(res, 'x'.repeat(64 << 10), 20e6);
      case 'long-line':
        res.write(HONEST);
        res.write('x'.repeat(1 << 20));
        res.end('\n');
        return;
      case 'endless':
        return pump(res, BUCKETS, Infinity);
      case 'drip': {
        res.write(HONEST.slice(0, 40));
        const timer = setInterval(() => {
          if (res.destroyed) return clearInterval(timer);
          sent += 8;
          res.write('# drip\n');
        }, 100);
        return;
      }
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/metrics`,
    bytesSent: () => sent,
    scrapes: () => scrapes,
    abandoned: () => abandoned,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of live) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
