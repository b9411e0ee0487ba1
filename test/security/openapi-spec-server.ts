import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A loopback server for spec documents, on every local address (`::`, so `[::1]` and `127.0.0.1` reach it). */
export interface SpecServer {
  port: number;
  /** Paths requested, in order. */
  seen: string[];
  close(): Promise<void>;
}

/**
 * Serves `files` (path → text); `/redirect?to=URL` answers 302 to URL. Listens on `::`
 * (dual stack), so every loopback spelling would reach it if a check let it through.
 */
export async function startSpecServer(files: Record<string, string>): Promise<SpecServer> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    seen.push(url.pathname);
    const to = url.searchParams.get('to');
    if (url.pathname === '/redirect' && to) {
      res.writeHead(302, { location: to });
      return res.end();
    }
    const file = files[url.pathname];
    if (file === undefined) {
      res.writeHead(404);
      return res.end('not found');
    }
    res.writeHead(200, { 'content-type': 'application/yaml' });
    res.end(file);
  });
  await new Promise<void>((resolve) => server.listen(0, '::', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A spec whose one parameter is the `$ref` given, and whose tools call `server`. */
export function specWithRef(ref: string, server = 'http://127.0.0.1:9/v1'): string {
  return `openapi: 3.0.3
info: { title: Split spec, version: '1' }
servers: [{ url: '${server}' }]
paths:
  /pets:
    get:
      operationId: listPets
      parameters: [{ $ref: '${ref}' }]
      responses: { '200': { description: ok } }
`;
}

export const PARAMS = `Limit: { name: limit, in: query, schema: { type: integer } }\n`;

/** A DNS stub: names to addresses, every question recorded. */
export function stubLookup(names: Record<string, readonly string[]>): {
  lookup: (hostname: string) => Promise<{ address: string; family: number }[]>;
  asked: string[];
} {
  const asked: string[] = [];
  const lookup = async (hostname: string) => {
    asked.push(hostname);
    const addresses = names[hostname];
    if (!addresses) throw new Error(`getaddrinfo ENOTFOUND ${hostname}`);
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { lookup, asked };
}
