import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { agentAsMcp, type McpServedAgent } from './agent-as-mcp.js';
import { McpHttpHandler } from './mcp-http-handler.js';
import type { McpHttpServer, McpServable, McpStdioServer, ServeMcpCommonOptions, ServeMcpHttpOptions, ServeMcpStdioOptions } from './serve-mcp.js';
import { servedServer, type ServedServerOptions } from './served-server.js';
import type { ServedTool } from './served-tool.js';
import { toolAsMcp } from './tool-as-mcp.js';
import type { AnyTool } from '../../types/tool.js';

/* The Node side of `serveMcp`, loaded on first use with the SDK (an optional peer). */

/** Serves on stdio: one session, for as long as stdin stays open. */
export async function serveStdio(served: McpServable, options: ServeMcpStdioOptions): Promise<McpStdioServer> {
  const tools = catalog(served, options);
  const stdin = options.stdin ?? process.stdin;
  const server = servedServer(tools, serverOptions(options));
  let closed!: () => void;
  const closedPromise = new Promise<void>((resolve) => (closed = resolve));
  server.onclose = () => closed();
  // The SDK's stdio transport does not watch for the end of stdin: the client hung up, so close.
  const hangUp = (): void => void server.close().catch(() => undefined);
  stdin.once('end', hangUp);
  await server.connect(new StdioServerTransport(stdin, options.stdout ?? process.stdout));
  return {
    transport: 'stdio',
    closed: closedPromise,
    close: async () => {
      stdin.off('end', hangUp);
      await server.close();
    },
  };
}

/** The Streamable HTTP endpoint: one SDK server per session. */
export async function serveHttp(served: McpServable, options: ServeMcpHttpOptions): Promise<McpHttpServer> {
  const tools = catalog(served, options);
  return new McpHttpHandler(() => servedServer(tools, serverOptions(options)), options);
}

function serverOptions(options: ServeMcpCommonOptions): ServedServerOptions {
  return {
    name: options.name ?? 'phi-rx',
    version: options.version ?? '0.1.0',
    ...(options.instructions !== undefined ? { instructions: options.instructions } : {}),
    ...(options.elicitationTimeoutMs !== undefined ? { elicitationTimeoutMs: options.elicitationTimeoutMs } : {}),
  };
}

/** The served tools by name; throws a TypeError naming the duplicate or the bad entry. */
function catalog(served: McpServable, options: ServeMcpCommonOptions): ReadonlyMap<string, ServedTool> {
  const { agents, tools } = partsOf(served);
  const all = [...agents.map((a) => agentAsMcp(a, options.onEvent)), ...tools.map(toolAsMcp)];
  const byName = new Map<string, ServedTool>();
  for (const tool of all) {
    if (byName.has(tool.info.name)) throw new TypeError(`serveMcp: two served tools are named "${tool.info.name}"; tool names must be unique`);
    byName.set(tool.info.name, tool);
  }
  if (byName.size === 0) throw new TypeError('serveMcp: nothing to serve: give an agent ({ agent, name }), tools, or { agents, tools }');
  return byName;
}

function partsOf(served: McpServable): { agents: readonly McpServedAgent[]; tools: readonly AnyTool[] } {
  if (Array.isArray(served)) return { agents: [], tools: served as readonly AnyTool[] };
  const s = served as Partial<McpServedAgent> & { agents?: readonly McpServedAgent[]; tools?: readonly AnyTool[] };
  if (s.agent !== undefined) return { agents: [s as McpServedAgent], tools: [] };
  if (s.agents !== undefined || s.tools !== undefined) return { agents: s.agents ?? [], tools: s.tools ?? [] };
  throw new TypeError('serveMcp: expected an agent ({ agent, name }), an array of tools, or { agents, tools }');
}
