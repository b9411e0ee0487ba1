import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { httpFailure, isAuthFailure, isClientError } from './http-status.js';
import type { McpConnectOptions, McpHttpParams, McpStdioParams, McpTransportKind } from './connection.js';
import type { McpImplementation } from './types.js';
import { errorMessage } from '../../types/errors.js';
import { McpConnectionError } from './errors.js';
import { ProgressRouter } from './progress-router.js';
import { ActiveCalls, elicitationHandler } from './elicitation-handler.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { StdioProcessTransport, describeExit } from './stdio-transport.js';
import { DEFAULT_MCP_TIMEOUT_MS } from './connect.js';

/*
 * Transport setup of an MCP connection: the stdio and HTTP transports, and `initialize` over a fresh
 * SDK Client. The connection (./connection.ts) calls an Opener on connect and on every reconnect.
 */

const CLIENT_INFO: McpImplementation = { name: 'phi-rx', version: '0.1.0' };

/** One initialized session: the SDK client over its transport. */
export interface Session {
  client: Client;
  progress: ProgressRouter;
  /** The phi-rx tool calls running on this session (whom a server's elicitation is about). */
  calls: ActiveCalls;
  kind: McpTransportKind;
  /** Why this session ended, for error results ("exited with code 3; stderr: ..."). */
  describeDisconnect(): string;
}

/** Opens a new session; called on connect and on every reconnect. */
export type Opener = () => Promise<Session>;

/** Spawns the server process and initializes a session over its stdio. */
export function stdioOpener(params: McpStdioParams, fallbackName: string): Opener {
  return async () => {
    const transport = new StdioProcessTransport({
      command: params.command,
      args: params.args ?? [],
      env: params.env ?? {},
      cwd: params.cwd,
      onStderr: params.onStderr,
      scheduler: params.scheduler,
    });
    const describe = (): string => {
      const why = transport.exit ? describeExit(transport.exit) : 'connection closed';
      const stderr = transport.stderr;
      return stderr ? `${why}; stderr: ${lastChars(stderr, 500)}` : why;
    };
    try {
      return await openSession(params, transport, 'stdio', describe);
    } catch (error) {
      await transport.close().catch(() => undefined);
      throw new McpConnectionError(
        fallbackName,
        `Could not start MCP server ${fallbackName} (${[params.command, ...(params.args ?? [])].join(' ')}): ${errorMessage(error)}${transport.exit ? ` (${describe()})` : ''}`,
        { cause: error },
      );
    }
  };
}

/** Initializes a session over Streamable HTTP, falling back to HTTP+SSE on a 4xx (per `params.transport`). */
export function httpOpener(params: McpHttpParams, url: URL, fallbackName: string): Opener {
  const requestInit: RequestInit = { headers: { ...params.headers } };
  const mode = params.transport ?? 'auto';
  const fail = (how: string, error: unknown) =>
    new McpConnectionError(fallbackName, `Could not connect to MCP server ${fallbackName} at ${url.origin}${url.pathname} over ${how}: ${httpFailure(error)}`, { cause: error });

  const describe = () => 'connection closed';
  return async () => {
    if (mode !== 'sse') {
      try {
        return await openSession(params, new StreamableHTTPClientTransport(url, { requestInit }), 'streamableHttp', describe);
      } catch (error) {
        // 401/403 is an answer about credentials, not "not this protocol": no SSE fallback.
        if (mode === 'streamableHttp' || !isClientError(error) || isAuthFailure(error)) throw fail('Streamable HTTP', error);
      }
    }
    try {
      return await openSession(params, new SSEClientTransport(url, { requestInit }), 'sse', describe);
    } catch (error) {
      throw fail(mode === 'sse' ? 'SSE' : 'Streamable HTTP (4xx) nor SSE', error);
    }
  };
}

/** `initialize` over a fresh Client; on failure the client (and with it the transport) is closed. */
async function openSession(options: McpConnectOptions, transport: Transport, kind: McpTransportKind, describeDisconnect: () => string): Promise<Session> {
  const onElicitation = options.onElicitation;
  const client = new Client(options.clientInfo ?? CLIENT_INFO, { capabilities: onElicitation ? { elicitation: { form: {} } } : {} });
  const calls = new ActiveCalls();
  if (onElicitation) {
    const server = () => options.name ?? client.getServerVersion()?.name ?? 'the MCP server';
    client.setRequestHandler(ElicitRequestSchema, elicitationHandler(onElicitation, calls, server));
  }
  const progress = new ProgressRouter();
  progress.attach(transport);
  try {
    await client.connect(transport, { timeout: options.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS });
  } catch (error) {
    await client.close().catch(() => undefined);
    throw error;
  }
  return { client, progress, calls, kind, describeDisconnect };
}

function lastChars(text: string, n: number): string {
  return text.length <= n ? text : `...${text.slice(-n)}`;
}
