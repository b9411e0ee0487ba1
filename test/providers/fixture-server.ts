/**
 * Test helper shared by the provider tests: a loopback HTTP server that replays recorded
 * provider streams over real sockets, and readers for the third-party fixtures in
 * `../shared/fixtures/providers/` (never copied into this repository).
 *
 * The server:
 * - serves a body in chunks cut at arbitrary (seeded) byte boundaries, always including a cut
 *   inside a multi-byte UTF-8 character when the body has one;
 * - records every request (method, path, headers, body) and when its socket closed;
 * - injects faults: an error status with headers, a connection reset after N bytes, a stall
 *   after N bytes (the socket stays open and silent until the client gives up).
 *
 * @example
 * const server = await startFixtureServer();
 * server.enqueue({ body: sseBody });
 * // ... point a provider's baseUrl at server.url ...
 * expect(server.requests[0]!.json()).toMatchObject({ stream: true });
 * await server.close();
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { skipGroup } from '../support/skip.js';

/** How to cut a body into chunks. */
export interface ChunkingOptions {
  /** Explicit chunk sizes, cycled; overrides the seeded sizes. */
  sizes?: number[];
  /** Seed of the pseudo-random sizes (1..maxChunk). Default 1. */
  seed?: number;
  /** Largest chunk. Default 64. */
  maxChunk?: number;
  /** Add a cut inside the first multi-byte UTF-8 character. Default true. */
  splitUtf8?: boolean;
}

export type Fault =
  /** Write `afterBytes` of the body, then reset the TCP connection (RST). */
  | { kind: 'reset'; afterBytes: number }
  /** Write `afterBytes` of the body, then go silent with the socket open. */
  | { kind: 'stall'; afterBytes: number };

export interface FixtureResponse {
  /** Default 200. */
  status?: number;
  /** Default `content-type: text/event-stream` for 200, `application/json` otherwise. */
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  chunking?: ChunkingOptions;
  /** Real-time pause between chunks, ms. Default 0 (one event-loop turn). */
  delayMs?: number;
  fault?: Fault;
}

export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/v1/messages`. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  json(): Record<string, unknown>;
  /** Body bytes written to the client so far. */
  bytesSent: number;
  /** Resolves when the response ends: `completed` if fully written, `aborted` if the client left first. */
  finished: Promise<'completed' | 'aborted'>;
  /** Resolves when the underlying socket is closed (by either side). */
  socketClosed: Promise<void>;
}

export interface FixtureServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  requests: RecordedRequest[];
  /** Queues responses, served one per request in order. */
  enqueue(...responses: FixtureResponse[]): void;
  /** Serves requests once the queue is empty. Default: 500 "no fixture queued". */
  fallback(respond: (request: RecordedRequest) => FixtureResponse): void;
  /** Sockets currently open on the server side. */
  openConnections(): number;
  /** Connections accepted since the server started (keep-alive reuse keeps this low). */
  acceptedConnections(): number;
  /** Destroys every socket and stops listening. */
  close(): Promise<void>;
}

export async function startFixtureServer(): Promise<FixtureServer> {
  const queue: FixtureResponse[] = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  // One close listener per socket: keep-alive sockets serve many requests, and a listener per
  // request would pile up (MaxListenersExceededWarning) on a long-lived connection.
  const socketClosed = new WeakMap<Socket, Promise<void>>();
  let accepted = 0;
  let fallbackResponder = (_: RecordedRequest): FixtureResponse => ({
    status: 500,
    body: JSON.stringify({ error: { message: 'fixture server: no response queued' } }),
  });

  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => parts.push(chunk));
    req.on('end', () => {
      let resolveFinished!: (v: 'completed' | 'aborted') => void;
      const finished = new Promise<'completed' | 'aborted'>((r) => (resolveFinished = r));
      const socket = req.socket;
      const body = Buffer.concat(parts).toString('utf8');
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        body,
        json: () => JSON.parse(body) as Record<string, unknown>,
        bytesSent: 0,
        finished,
        socketClosed: socketClosed.get(socket) ?? Promise.resolve(),
      };
      requests.push(recorded);
      res.on('close', () => resolveFinished(res.writableFinished ? 'completed' : 'aborted'));
      const response = queue.shift() ?? fallbackResponder(recorded);
      void serve(res, socket, response, recorded);
    });
  });
  server.on('connection', (socket) => {
    socket.setNoDelay(true);
    accepted++;
    sockets.add(socket);
    socketClosed.set(
      socket,
      new Promise<void>((resolve) =>
        socket.once('close', () => {
          sockets.delete(socket);
          resolve();
        }),
      ),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('fixture server: no TCP address');

  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    enqueue: (...responses) => queue.push(...responses),
    fallback: (respond) => {
      fallbackResponder = respond;
    },
    openConnections: () => sockets.size,
    acceptedConnections: () => accepted,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function serve(res: ServerResponse, socket: Socket, response: FixtureResponse, recorded: RecordedRequest): Promise<void> {
  const status = response.status ?? 200;
  const bytes = toBytes(response.body ?? '');
  res.writeHead(status, {
    'content-type': status === 200 ? 'text/event-stream' : 'application/json',
    ...response.headers,
  });
  res.flushHeaders();
  const limit = response.fault ? Math.min(response.fault.afterBytes, bytes.length) : bytes.length;
  for (const chunk of chunkBytes(bytes.subarray(0, limit), response.chunking)) {
    if (res.destroyed) return;
    res.write(chunk);
    recorded.bytesSent += chunk.length;
    await pause(response.delayMs ?? 0);
  }
  if (res.destroyed) return;
  if (response.fault?.kind === 'reset') {
    await pause(5);
    socket.resetAndDestroy();
    return;
  }
  if (response.fault?.kind === 'stall') return; // the client's idle timeout has to end it
  res.end();
}

/**
 * Resolves when every response the server started has ended (completed or aborted by the
 * client); fails after `withinMs`. A request still hanging is a leaked socket.
 */
export async function expectAllResponsesEnded(server: FixtureServer, withinMs = 2_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const open = server.requests.filter((r) => r.bytesSent >= 0).length;
      reject(new Error(`fixture server: some of ${open} responses never ended (leaked request/socket)`));
    }, withinMs);
  });
  try {
    await Promise.race([Promise.all(server.requests.map((r) => r.finished)), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Cuts `bytes` into chunks of seeded pseudo-random sizes; with `splitUtf8` (default) one cut
 * falls inside the first multi-byte UTF-8 character.
 */
export function chunkBytes(bytes: Uint8Array, options: ChunkingOptions = {}): Uint8Array[] {
  const cuts = new Set<number>();
  const maxChunk = Math.max(1, options.maxChunk ?? 64);
  const random = seededRandom(options.seed ?? 1);
  let position = 0;
  let i = 0;
  while (position < bytes.length) {
    const size = options.sizes ? options.sizes[i++ % options.sizes.length]! : 1 + Math.floor(random() * maxChunk);
    position += Math.max(1, size);
    if (position < bytes.length) cuts.add(position);
  }
  if (options.splitUtf8 ?? true) {
    const lead = bytes.findIndex((b) => b >= 0xc0);
    if (lead >= 0 && lead + 1 < bytes.length) cuts.add(lead + 1);
  }
  const sorted = [...cuts].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let start = 0;
  for (const cut of sorted) {
    chunks.push(bytes.subarray(start, cut));
    start = cut;
  }
  if (start < bytes.length || bytes.length === 0) chunks.push(bytes.subarray(start));
  return chunks.filter((c) => c.length > 0);
}

function seededRandom(seed: number): () => number {
  // mulberry32: tiny, deterministic, good enough to pick chunk sizes.
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pause = (ms: number) => new Promise<void>((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)));

const toBytes = (body: string | Uint8Array): Uint8Array => (typeof body === 'string' ? Buffer.from(body, 'utf8') : body);

// ---------------------------------------------------------------------------------------------
// Fixture files

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** `$PHI_RX_FIXTURES` or `<repo>/../shared/fixtures`. */
export const fixturesRoot: string = process.env['PHI_RX_FIXTURES'] ?? path.resolve(repoRoot, '../shared/fixtures');

/** The folder of one provider family, e.g. `providerFixtureDir('anthropic')`. */
export function providerFixtureDir(family: string): string {
  return path.join(fixturesRoot, 'providers', family);
}

/** True when the family's folder exists; otherwise prints the one line of a skipped group, naming the path. */
export function fixturesAvailable(family: string): boolean {
  const dir = providerFixtureDir(family);
  return !skipGroup(`${family} provider tests on recorded streams`, !fixturesPresent(family) && `no fixtures at ${dir} (set PHI_RX_FIXTURES)`);
}

/** True when the family's folder exists (nothing printed). */
export function fixturesPresent(family: string): boolean {
  return existsSync(path.join(providerFixtureDir(family), 'manifest.json'));
}

/** One entry of a folder's manifest.json (only the fields the tests read are typed). */
export interface ManifestEntry {
  file: string;
  format: string;
  family?: string;
  request_url?: string;
  status?: number;
  facts: Record<string, unknown> & {
    text?: string;
    thinking?: string;
    signature?: boolean;
    tool_calls?: Array<{ name: string; arguments: unknown; id?: string; input?: unknown; index?: number }>;
    stop_reason?: string | null;
    model?: string;
  };
  [key: string]: unknown;
}

export function loadManifest(family: string): ManifestEntry[] {
  const raw = JSON.parse(readFileSync(path.join(providerFixtureDir(family), 'manifest.json'), 'utf8')) as unknown;
  return (Array.isArray(raw) ? raw : (raw as { files: ManifestEntry[] }).files) as ManifestEntry[];
}

/** A fixture file's exact bytes. */
export function readFixtureBytes(family: string, file: string): Buffer {
  return readFileSync(path.join(providerFixtureDir(family), file));
}

/**
 * The HTTP body to serve for a fixture: `.sse` files as recorded; `.chunks.txt` files (one JSON
 * chunk per line, no framing) re-framed as `data: <line>\n\n`.
 */
export function fixtureBody(family: string, file: string): Buffer {
  const bytes = readFixtureBytes(family, file);
  if (!file.endsWith('.chunks.txt')) return bytes;
  const lines = bytes.toString('utf8').split('\n').filter((l) => l.trim() !== '');
  return Buffer.from(lines.map((l) => `data: ${l}\n\n`).join(''), 'utf8');
}

/** A cassette under `_cassettes/`, as text (YAML). */
export function readCassette(relativePath: string): string | undefined {
  const file = path.join(fixturesRoot, 'providers', '_cassettes', relativePath);
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}
