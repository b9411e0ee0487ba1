import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the server saw of one request, for assertions on the wire format. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface PetstoreServer {
  /** `http://127.0.0.1:{port}` */
  origin: string;
  requests: SeenRequest[];
  /** When set, every /v1 and /v2 request must carry `Authorization: Bearer {token}`. */
  requireBearer: string | undefined;
  /** Requests to /slow still open (the client has not gone away). */
  pendingSlow(): number;
  /** Also ends the /slow requests still open. */
  close(): Promise<void>;
}

interface Pet {
  id: number;
  name: string;
  tag?: string;
}

/**
 * A loopback implementation of both Petstore fixtures: `oai__petstore.yaml` under /v1
 * (listPets, createPets, showPetById) and `oai__petstore-expanded.yaml` under /v2 (findPets,
 * addPet, "find pet by id", deletePet), plus test routes: /echo (the request, as JSON),
 * /big?bytes=N (N bytes of 3-byte characters), /image, /slow (never answers), and `files` (path → text).
 */
export async function startPetstore(files: Record<string, string> = {}): Promise<PetstoreServer> {
  const pets: Pet[] = [
    { id: 1, name: 'Rex', tag: 'dog' },
    { id: 2, name: 'Tom', tag: 'cat' },
    { id: 3, name: 'Nemo', tag: 'fish' },
  ];
  let nextId = 4;
  const requests: SeenRequest[] = [];
  const hanging = new Set<ServerResponse>();
  const state: PetstoreServer = { origin: '', requests, requireBearer: undefined, pendingSlow: () => hanging.size, close: async () => undefined };

  const json = (res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(value));
  };
  const error = (res: ServerResponse, status: number, message: string) => json(res, status, { code: status, message });

  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = req.method ?? 'GET';
    requests.push({ method, url: req.url ?? '/', headers: req.headers, body });

    const file = files[url.pathname];
    if (file !== undefined) {
      res.writeHead(200, { 'content-type': url.pathname.endsWith('.json') ? 'application/json' : 'application/yaml' });
      return res.end(file);
    }
    if (url.pathname.startsWith('/echo')) return json(res, 200, { method, path: url.pathname, query: [...url.searchParams], headers: req.headers, body });
    if (url.pathname === '/big') {
      const bytes = Number(url.searchParams.get('bytes'));
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(bytes) });
      return res.end('€'.repeat(Math.floor(bytes / 3)));
    }
    if (url.pathname === '/slow') {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
      return;
    }
    if (url.pathname === '/image') {
      res.writeHead(200, { 'content-type': 'image/png' });
      return res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    }
    if (state.requireBearer !== undefined && req.headers.authorization !== `Bearer ${state.requireBearer}`) {
      return error(res, 401, 'missing or wrong bearer token');
    }

    const match = /^\/(v1|v2)\/pets(?:\/([^/]+))?$/.exec(url.pathname);
    if (!match) return error(res, 404, `no route ${method} ${url.pathname}`);
    const [, version, rawId] = match;
    if (rawId === undefined) {
      if (method === 'GET') {
        const tags = url.searchParams.getAll('tags');
        const limit = Number(url.searchParams.get('limit') ?? pets.length);
        const found = pets.filter((p) => tags.length === 0 || tags.includes(p.tag ?? '')).slice(0, limit);
        return json(res, 200, found, version === 'v1' ? { 'x-next': '/v1/pets?page=2' } : {});
      }
      if (method === 'POST') {
        if (req.headers['content-type'] !== 'application/json') return error(res, 415, 'expected application/json');
        const input = JSON.parse(body) as Partial<Pet>;
        if (typeof input.name !== 'string') return error(res, 400, 'name is required');
        const pet: Pet = { id: version === 'v1' && typeof input.id === 'number' ? input.id : nextId++, name: input.name, ...(input.tag ? { tag: input.tag } : {}) };
        pets.push(pet);
        if (version === 'v1') {
          res.writeHead(201);
          return res.end();
        }
        return json(res, 200, pet);
      }
      return error(res, 405, `${method} not allowed`);
    }
    const id = decodeURIComponent(rawId);
    const index = pets.findIndex((p) => String(p.id) === id);
    if (index < 0) return error(res, 404, `pet ${id} not found`);
    if (method === 'GET') return json(res, 200, pets[index]);
    if (method === 'DELETE' && version === 'v2') {
      pets.splice(index, 1);
      res.writeHead(204);
      return res.end();
    }
    return error(res, 405, `${method} not allowed`);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}
