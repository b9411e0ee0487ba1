import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable, Writable } from 'node:stream';
import { loadOptionalPeer } from '../../util/optional-peer.js';
import type { AllowedOrigins } from '../../protocols/transport/node/http-guard.js';
import type { AnyTool } from '../../types/tool.js';
import type { McpRunEventListener, McpServedAgent } from './agent-as-mcp.js';

export type { McpRunEventListener, McpServedAgent } from './agent-as-mcp.js';

/** What `serveMcp` serves: an agent (as `ask_<name>`), phi-rx tools, or both. */
export type McpServable = McpServedAgent | readonly AnyTool[] | { readonly agents?: readonly McpServedAgent[]; readonly tools?: readonly AnyTool[] };

export interface ServeMcpCommonOptions {
  /** The server's name in `initialize` (and in approval messages). Default `phi-rx`. */
  name?: string;
  /** The server's version in `initialize`. Default `0.1.0`. */
  version?: string;
  /** `instructions` in `initialize`: how a client's model should use this server. */
  instructions?: string;
  /** Every event of every served agent run, with the call it serves (logs, audits, tests). */
  onEvent?: McpRunEventListener;
  /** How long a call waits for the client's user to answer an approval, ms. Default 600 000 (10 minutes). */
  elicitationTimeoutMs?: number;
}

export interface ServeMcpStdioOptions extends ServeMcpCommonOptions {
  transport: 'stdio';
  /** Default `process.stdin`. */
  stdin?: Readable;
  /** Default `process.stdout`. Nothing else may write to it (log to stderr). */
  stdout?: Writable;
}

/** What an HTTP request asks, for `authorize`: its session (none for `initialize`), the JSON-RPC methods and the tools it calls. */
export interface McpAuthorizeContext {
  readonly sessionId: string | undefined;
  readonly methods: readonly string[];
  readonly tools: readonly string[];
}

/**
 * Decides whether an HTTP request may go on: `true` lets it, `false` answers 403, a throw answers the
 * error's `status` (401 or 403; 401 when it has none) with its message. Sync or async.
 */
export type McpAuthorizeRequest = (req: IncomingMessage, context: McpAuthorizeContext) => boolean | Promise<boolean>;

export interface ServeMcpHttpOptions extends ServeMcpCommonOptions {
  transport: 'http';
  /** Who may call: a check of each request, or `'allow-all'` said explicitly (keyless demos, loopback tests). */
  authorize: McpAuthorizeRequest | 'allow-all';
  /** Pages (browser origins) that may call, besides same-origin ones. Default none. */
  allowedOrigins?: AllowedOrigins;
  /** The largest request body, bytes (413 above). Default 1 MiB. */
  maxBodyBytes?: number;
  /** Open sessions at most (503 for a new one above). Default 100. */
  maxSessions?: number;
  /** A session with no request for this long is closed, ms. Default 1 800 000 (30 minutes). */
  sessionIdleMs?: number;
}

/** A server on this process's stdio. */
export interface McpStdioServer {
  readonly transport: 'stdio';
  /** Resolves when the client hangs up (stdin ends) or `close()` ran. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/** The Streamable HTTP endpoint: hand it each request of its route (`http.createServer(server.handle)`). */
export interface McpHttpServer {
  readonly transport: 'http';
  /** Open sessions. */
  readonly sessions: number;
  /** Serves one request (POST, GET, DELETE; OPTIONS for listed origins). Never throws. */
  readonly handle: (req: IncomingMessage, res: ServerResponse) => void;
  /** Closes every session (their running calls are aborted). */
  close(): Promise<void>;
}

/**
 * Serves an agent (as the tool `ask_<name>`) and phi-rx tools to MCP clients, over stdio or
 * Streamable HTTP, with the official SDK's server classes. Each agent call runs on a new conversation;
 * its progress goes to the client as progress notifications, the client's cancel aborts it, and a
 * tool call that needs approval asks the client's user (elicitation). Needs the optional peer
 * `@modelcontextprotocol/sdk`.
 *
 * @example
 * const server = await serveMcp({ agent, name: 'helper' }, { transport: 'http', authorize: (req) => req.headers.authorization === `Bearer ${token}` });
 * http.createServer(server.handle).listen(3001, '127.0.0.1');
 */
export function serveMcp(served: McpServable, options: ServeMcpStdioOptions): Promise<McpStdioServer>;
export function serveMcp(served: McpServable, options: ServeMcpHttpOptions): Promise<McpHttpServer>;
export async function serveMcp(served: McpServable, options: ServeMcpStdioOptions | ServeMcpHttpOptions): Promise<McpStdioServer | McpHttpServer> {
  checkOptions(options);
  const node = await loadOptionalPeer('@modelcontextprotocol/sdk', 'phi-rx/mcp', () => import('./serve-mcp-node.js'));
  return options.transport === 'stdio' ? node.serveStdio(served, options) : node.serveHttp(served, options);
}

function checkOptions(options: ServeMcpStdioOptions | ServeMcpHttpOptions): void {
  const transport = (options as { transport?: unknown } | undefined)?.transport;
  if (transport !== 'stdio' && transport !== 'http') {
    throw new TypeError(`serveMcp: options.transport must be 'stdio' or 'http', got ${JSON.stringify(transport) ?? 'nothing'}`);
  }
  if (options.transport === 'http') {
    const authorize: unknown = options.authorize;
    if (authorize !== 'allow-all' && typeof authorize !== 'function') {
      throw new TypeError(
        `serveMcp: options.authorize is required for HTTP: a function (req, { sessionId, methods, tools }) => boolean | Promise<boolean> ` +
          `deciding who may call, or 'allow-all' to serve anyone who can reach the port (keyless demos only); got ${authorize === undefined ? 'nothing' : typeof authorize}`,
      );
    }
    for (const key of ['maxBodyBytes', 'maxSessions', 'sessionIdleMs'] as const) {
      const value = options[key];
      if (value !== undefined && !(Number.isInteger(value) && value > 0)) throw new TypeError(`serveMcp: options.${key} must be a positive integer, got ${String(value)}`);
    }
  }
}
