/**
 * A loopback HTTP server for the provider-limit tests: each response is a head and then chunks
 * pulled from a generator, written with backpressure (it waits for `drain`) and never held, so the
 * server can offer hundreds of MiB while holding one chunk. It records how many bytes it wrote and
 * when the client closed the socket.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FloodResponse {
  status?: number;
  headers?: Record<string, string>;
  /** The body, pulled one chunk at a time; it ends when the generator does or the client leaves. */
  body: () => Iterable<Uint8Array | string>;
}

export interface FloodRequest {
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Body bytes written so far. */
  bytesSent: number;
  /** Resolves when the response is over: `client-closed` if the client closed the socket first. */
  finished: Promise<'completed' | 'client-closed'>;
}

export interface FloodServer {
  url: string;
  requests: FloodRequest[];
  close(): Promise<void>;
}

export async function startFloodServer(respond: (request: { url: string; headers: IncomingHttpHeaders; body: string }) => FloodResponse): Promise<FloodServer> {
  const requests: FloodRequest[] = [];
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const seen = { url: req.url ?? '', headers: req.headers, body: Buffer.concat(parts).toString('utf8') };
      let settle: (how: 'completed' | 'client-closed') => void = () => undefined;
      const record: FloodRequest = { ...seen, bytesSent: 0, finished: new Promise((resolve) => (settle = resolve)) };
      requests.push(record);
      const plan = respond(seen);
      res.writeHead(plan.status ?? 200, plan.headers ?? { 'content-type': 'text/event-stream' });
      let closed = false;
      res.on('close', () => {
        closed = true;
        if (!res.writableFinished) settle('client-closed');
      });
      void (async () => {
        for (const chunk of plan.body()) {
          if (closed) return;
          const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
          record.bytesSent += bytes.byteLength;
          if (!res.write(bytes)) {
            await new Promise<void>((resolve) => {
              const done = (): void => {
                res.off('drain', done);
                res.off('close', done);
                resolve();
              };
              res.on('drain', done);
              res.on('close', done);
            });
          }
        }
        if (!closed) res.end(() => settle('completed'));
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** `total` bytes of `x` in chunks of 64 KiB, made as they are pulled (one chunk reused). */
export function* filler(total: number, chunkBytes = 64 * 1024): Generator<Uint8Array> {
  const chunk = new Uint8Array(chunkBytes).fill(0x78);
  for (let sent = 0; sent < total; sent += chunkBytes) yield chunk;
}

export const MiB = 1024 * 1024;
