/**
 * The web demo: `npm run demo:web`, then open http://localhost:5173. A node:http server that
 * bundles page.ts with esbuild, starts a run per prompt and serves its events with
 * `phi-rx/transport/node` (resume included); the page steers and aborts through the command
 * channel. Each browser gets a session cookie when it first prompts; a run's events and commands
 * are served only to the session that started it (the hub's `authorize`). Scripted provider by default; a real model when ANTHROPIC_API_KEY, OPENAI_API_KEY or
 * GEMINI_API_KEY is set (PHI_RX_SCRIPTED=1 forces the scripted one).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { randomUUID } from 'node:crypto';
import { build } from 'esbuild';
import { EventStreamHub } from '../../src/protocols/transport/node/index.js';
import { demoAgent, type DemoAgentOptions } from './agent.js';
import { PAGE_HTML } from './page-html.js';

/** Bundles the page for the browser (platform 'browser': a Node built-in in it would fail the build). */
export async function bundlePage(): Promise<string> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('./page.ts', import.meta.url))],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

export interface DemoServer {
  url: string;
  hub: EventStreamHub;
  /** Every event-stream request's Last-Event-ID (undefined on a first connection). */
  eventRequests: (string | undefined)[];
  /** Cuts every open event stream, as a network failure would (for tests). */
  dropEventStreams(): void;
  close(): Promise<void>;
}

export async function startDemoServer(options: DemoAgentOptions & { port?: number } = {}): Promise<DemoServer> {
  const script = await bundlePage();
  const owners = new Map<string, string>(); // run id → the session that started it
  const hub = new EventStreamHub({
    basePath: '/api/runs',
    heartbeatMs: 10_000,
    // a run id alone is not enough: the request must come from the session that started the run
    authorize: (req, { runId }) => {
      const session = sessionOf(req);
      return session !== undefined && owners.get(runId) === session;
    },
  });
  const streams = new Set<Socket>();
  const eventRequests: (string | undefined)[] = [];
  const server: Server = createServer((req, res) => {
    if (req.url?.startsWith('/api/runs/') && req.url.endsWith('/events') && req.socket) {
      const id = req.headers['last-event-id'];
      eventRequests.push(Array.isArray(id) ? id[0] : id);
      streams.add(req.socket);
      req.once('close', () => streams.delete(req.socket));
    }
    if (hub.handle(req, res)) return;
    route(req, res, script, hub, owners, options);
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hub,
    eventRequests,
    dropEventStreams: () => {
      for (const socket of streams) socket.destroy();
      streams.clear();
    },
    close: async () => {
      hub.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const SESSION_COOKIE = 'phi_rx_demo_session';

/** The request's session id, from its cookie. */
function sessionOf(req: IncomingMessage): string | undefined {
  const cookies = (req.headers.cookie ?? '').split(';').map((c) => c.trim());
  return cookies.find((c) => c.startsWith(`${SESSION_COOKIE}=`))?.slice(SESSION_COOKIE.length + 1) || undefined;
}

function route(req: IncomingMessage, res: ServerResponse, script: string, hub: EventStreamHub, owners: Map<string, string>, options: DemoAgentOptions): void {
  if (req.method === 'GET' && (req.url === '/' || req.url === '/index.html')) {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE_HTML);
  } else if (req.method === 'GET' && req.url === '/page.js') {
    res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(script);
  } else if (req.method === 'POST' && req.url === '/api/prompt') {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      let text: unknown;
      try {
        text = (JSON.parse(body) as { text?: unknown }).text;
      } catch (e) {
        return json(res, 400, { error: `the prompt is not JSON: ${(e as Error).message}` });
      }
      if (typeof text !== 'string' || text.trim() === '') return json(res, 400, { error: 'field "text" must be a non-empty string' });
      let session = sessionOf(req);
      if (session === undefined) {
        session = randomUUID();
        res.setHeader('set-cookie', `${SESSION_COOKIE}=${session}; HttpOnly; SameSite=Strict; Path=/`);
      }
      const runId = hub.startAgent(demoAgent(options), text);
      owners.set(runId, session);
      json(res, 200, { runId });
    });
  } else {
    json(res, 404, { error: `no route ${req.method} ${req.url}` });
  }
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const port = Number(process.env['PORT'] ?? 5173);
  const demo = await startDemoServer({ port, scripted: Boolean(process.env['PHI_RX_SCRIPTED']) });
  console.log(`phi-rx web demo on ${demo.url} (Ctrl-C to stop)`);
}
