import { loadOptionalPeer } from '../../util/optional-peer.js';
import type { McpConnection, McpHttpParams, McpStdioParams } from './connection.js';

/** Per-request limit of the spec's McpClient (30 s). */
export const DEFAULT_MCP_TIMEOUT_MS = 30_000;

/**
 * The connection code and the MCP SDK it is built on, imported on the first connect: the SDK is an
 * optional peer dependency, so `import 'phi-rx/mcp'` works (and stays fast) without it, and a
 * connect without it rejects with a MissingPeerDependencyError naming `@modelcontextprotocol/sdk`.
 */
function loadConnection(): Promise<typeof import('./connection.js')> {
  return loadOptionalPeer('@modelcontextprotocol/sdk', 'phi-rx/mcp', () => import('./connection.js'));
}

/**
 * Starts an MCP server as a child process and connects to it over stdio.
 * Needs the optional peer `@modelcontextprotocol/sdk`.
 *
 * @example
 * const everything = await connectMcpStdio({
 *   command: 'npx',
 *   args: ['-y', '@modelcontextprotocol/server-everything'],
 *   env: { LOG_LEVEL: 'info' },
 * });
 * const tools = await everything.tools({ prefix: 'everything' });
 * // ...
 * await everything.close();
 */
export async function connectMcpStdio(params: McpStdioParams): Promise<McpConnection> {
  return (await loadConnection()).connectMcpStdio(params);
}

/**
 * Connects to an MCP server over Streamable HTTP, falling back to the legacy HTTP+SSE transport
 * when the server answers the Streamable HTTP handshake with a 4xx.
 * Needs the optional peer `@modelcontextprotocol/sdk`.
 *
 * @example
 * const remote = await connectMcpHttp({ url: 'http://127.0.0.1:3001/mcp', headers: { Authorization: `Bearer ${token}` } });
 * const tools = await remote.tools();
 */
export async function connectMcpHttp(params: McpHttpParams): Promise<McpConnection> {
  return (await loadConnection()).connectMcpHttp(params);
}
