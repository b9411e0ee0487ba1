import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { corsHeaders, guardRequest, refusedOrigin } from '../../protocols/transport/node/http-guard.js';
import { headerOf, readBody, sendJson } from '../../protocols/transport/node/http-io.js';
import type { McpAuthorizeContext, McpHttpServer, ServeMcpHttpOptions } from './serve-mcp.js';

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const DEFAULT_MAX_SESSIONS = 100;
const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;

interface OpenSession {
  readonly transport: StreamableHTTPServerTransport;
  readonly server: Server;
  lastSeen: number;
}

/**
 * The Streamable HTTP endpoint of `serveMcp`: checks each request (origin, body size, JSON,
 * `authorize`) before the SDK's transport sees it, and keeps one SDK server per session, at most
 * `maxSessions`, closing those idle for `sessionIdleMs`.
 */
export class McpHttpHandler implements McpHttpServer {
  readonly transport = 'http';
  private readonly open = new Map<string, OpenSession>();
  private readonly maxBodyBytes: number;
  private readonly maxSessions: number;
  private readonly idleMs: number;
  private sweeper: ReturnType<typeof setInterval> | undefined;
  private closed = false;

  constructor(
    private readonly newServer: () => Server,
    private readonly options: ServeMcpHttpOptions,
  ) {
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
    this.idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  }

  get sessions(): number {
    return this.open.size;
  }

  readonly handle = (req: IncomingMessage, res: ServerResponse): void => guardRequest(res, 'MCP request', () => this.serve(req, res));

  async close(): Promise<void> {
    this.closed = true;
    if (this.sweeper) clearInterval(this.sweeper);
    const sessions = [...this.open.values()];
    this.open.clear();
    await Promise.all(sessions.map((s) => s.server.close().catch(() => undefined)));
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const allowed = this.options.allowedOrigins;
    if (req.method === 'OPTIONS') return preflight(req, res, allowed);
    const origin = refusedOrigin(req, allowed);
    if (origin !== undefined) return sendJson(res, 403, { error: `origin ${origin} may not call this server (options.allowedOrigins)` });
    const cors = corsHeaders(req, allowed);
    for (const [name, value] of Object.entries(cors)) res.setHeader(name, value);
    if (cors['access-control-allow-origin']) res.setHeader('access-control-expose-headers', 'mcp-session-id');
    if (req.method !== 'POST' && req.method !== 'GET' && req.method !== 'DELETE') {
      return sendJson(res, 405, { error: `${req.method ?? 'this method'} is not allowed on an MCP endpoint (use POST, GET or DELETE)` });
    }
    if (this.closed) return sendJson(res, 503, { error: 'this MCP server is closed' });
    const body = req.method === 'POST' ? await this.readJson(req, res) : { value: undefined };
    if (body === undefined) return;
    const sessionId = headerOf(req, 'mcp-session-id');
    if (!(await this.authorized(req, res, contextOf(sessionId, body.value)))) return;
    if (sessionId !== undefined) {
      const session = this.open.get(sessionId);
      if (!session) return rpcError(res, 404, `no MCP session ${JSON.stringify(sessionId)} (it ended or was closed as idle): initialize a new one`);
      session.lastSeen = Date.now();
      return session.transport.handleRequest(req, res, body.value);
    }
    if (req.method !== 'POST' || !isInitialize(body.value)) return rpcError(res, 400, 'no mcp-session-id header: the first request of a session must be initialize');
    if (this.open.size >= this.maxSessions) return rpcError(res, 503, `too many open MCP sessions (${this.maxSessions}, options.maxSessions); try again later`);
    return this.startSession(req, res, body.value);
  }

  private async startSession(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const server = this.newServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.open.set(id, { transport, server, lastSeen: Date.now() });
        this.sweep();
      },
      onsessionclosed: (id) => void this.open.delete(id),
    });
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id !== undefined && this.open.get(id)?.transport === transport) this.open.delete(id);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  /** Starts the idle sweep with the first session; it does not keep the process alive. */
  private sweep(): void {
    if (this.sweeper) return;
    const every = Math.min(this.idleMs, 60_000);
    this.sweeper = setInterval(() => {
      const before = Date.now() - this.idleMs;
      for (const [id, s] of this.open) {
        if (s.lastSeen > before) continue;
        this.open.delete(id);
        void s.server.close().catch(() => undefined);
      }
    }, every);
    this.sweeper.unref?.();
  }

  /** The body as JSON, at most `maxBodyBytes`; answers 413 / 415 / 400 itself and resolves undefined then. */
  private async readJson(req: IncomingMessage, res: ServerResponse): Promise<{ value: unknown } | undefined> {
    const type = headerOf(req, 'content-type');
    if (type === undefined || type.split(';')[0]!.trim().toLowerCase() !== 'application/json') {
      sendJson(res, 415, { error: `an MCP request must be sent as content-type application/json, got ${type === undefined ? 'none' : JSON.stringify(type)}` });
      return undefined;
    }
    let read: Awaited<ReturnType<typeof readBody>>;
    try {
      read = await readBody(req, this.maxBodyBytes);
    } catch {
      res.destroy(); // the client is gone
      return undefined;
    }
    if ('tooLarge' in read) {
      if (!read.drained) res.shouldKeepAlive = false;
      rpcError(res, 413, `the request body is over ${this.maxBodyBytes} bytes (options.maxBodyBytes)`);
      return undefined;
    }
    try {
      return { value: JSON.parse(read.text) as unknown };
    } catch (e) {
      rpcError(res, 400, `the request body is not JSON: ${e instanceof Error ? e.message : String(e)}`, -32700);
      return undefined;
    }
  }

  private async authorized(req: IncomingMessage, res: ServerResponse, context: McpAuthorizeContext): Promise<boolean> {
    const authorize = this.options.authorize;
    if (authorize === 'allow-all') return true;
    let allowed: boolean;
    try {
      allowed = (await authorize(req, context)) === true;
    } catch (e) {
      const status = (e as { status?: unknown } | null)?.status;
      sendJson(res, status === 401 || status === 403 ? status : 401, { error: e instanceof Error ? e.message : 'not authorized' });
      return false;
    }
    if (!allowed) sendJson(res, 403, { error: `not allowed to call ${context.tools.length > 0 ? `the tool(s) ${context.tools.join(', ')}` : 'this MCP server'}` });
    return allowed;
  }
}

/** What `authorize` is shown of a request: its session, its JSON-RPC methods, the tools it calls. */
function contextOf(sessionId: string | undefined, body: unknown): McpAuthorizeContext {
  const messages = (Array.isArray(body) ? body : [body]).filter((m): m is Record<string, unknown> => m !== null && typeof m === 'object');
  const methods = messages.flatMap((m) => (typeof m['method'] === 'string' ? [m['method']] : []));
  const tools = messages.flatMap((m) => {
    const name = m['method'] === 'tools/call' ? (m['params'] as { name?: unknown } | undefined)?.name : undefined;
    return typeof name === 'string' ? [name] : [];
  });
  return { sessionId, methods, tools };
}

function isInitialize(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => m !== null && typeof m === 'object' && (m as { method?: unknown }).method === 'initialize');
}

/** A JSON-RPC error answer (what MCP clients read) with an HTTP status. */
function rpcError(res: ServerResponse, status: number, message: string, code = -32000): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null });
}

/** CORS preflight: 204 with MCP's methods and headers for a listed origin, else 403. */
function preflight(req: IncomingMessage, res: ServerResponse, allowed: ServeMcpHttpOptions['allowedOrigins']): void {
  const cors = corsHeaders(req, allowed);
  if (!cors['access-control-allow-origin']) return sendJson(res, 403, { error: `origin ${JSON.stringify(headerOf(req, 'origin') ?? null)} is not allowed (options.allowedOrigins)` });
  res.writeHead(204, {
    ...cors,
    'access-control-allow-methods': 'GET, POST, DELETE',
    'access-control-allow-headers': 'content-type, authorization, mcp-session-id, mcp-protocol-version, last-event-id',
    'access-control-expose-headers': 'mcp-session-id',
    'access-control-max-age': '600',
  }).end();
}
