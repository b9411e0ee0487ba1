/**
 * MCP servers as phi-rx tools, through the official SDK (`phi-rx/mcp`). The SDK is an optional peer
 * dependency: `npm install @modelcontextprotocol/sdk`. It loads on the first connect.
 *
 * @example
 * import { connectMcpStdio } from 'phi-rx/mcp';
 * const server = await connectMcpStdio({ command: 'my-mcp-server', env: { TOKEN: process.env.TOKEN! } });
 * const tools = await server.tools({ prefix: 'mine' });
 */
export { connectMcpStdio, connectMcpHttp, DEFAULT_MCP_TIMEOUT_MS } from './connect.js';
export { MissingPeerDependencyError } from '../../util/optional-peer.js';
export type {
  McpConnection,
  McpConnectionStatus,
  McpConnectOptions,
  McpHttpParams,
  McpLogMessage,
  McpStdioParams,
  McpToolInfo,
  McpToolsOptions,
  McpTransportKind,
} from './connection.js';
export { McpConnectionError } from './errors.js';
export { toToolResult as mcpResultToToolResult } from './content.js';
export type { McpCallResult } from './content.js';
export type { McpContentBlock, McpImplementation } from './types.js';
/** The name the model sees for an MCP tool: `{prefix}__{name}`, sanitized (see `safeToolName`). */
export { safeToolName as mcpToolName } from '../../tools/tool-name.js';
export { serveMcp } from './serve-mcp.js';
export type {
  McpAuthorizeContext,
  McpAuthorizeRequest,
  McpHttpServer,
  McpRunEventListener,
  McpServable,
  McpServedAgent,
  McpStdioServer,
  ServeMcpCommonOptions,
  ServeMcpHttpOptions,
  ServeMcpStdioOptions,
} from './serve-mcp.js';
export type { McpElicitation, McpElicitationHandler, McpElicitationSchema } from './elicitation.js';
