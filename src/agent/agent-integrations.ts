import type { AnyTool } from '../types/tool.js';
import type { McpConnection, McpHttpParams, McpStdioParams, McpToolsOptions } from '../integrations/mcp/index.js';
import type { OpenApiConfig, OpenApiTools, OperationFilter } from '../integrations/openapi/index.js';

/*
 * BasicAgent's MCP and OpenAPI integrations: each loads its module on first use, so
 * `import 'phi-rx'` stays light, and hands the tools it made to the agent.
 */

// Node-only integrations, loaded through variable specifiers so that browser bundlers of
// `phi-rx` do not pull them (and their Node built-ins) in; the comments keep Vite and webpack quiet about it.
const MCP_MODULE: string = '../integrations/mcp/index.js';
const OPENAPI_MODULE: string = '../integrations/openapi/index.js';
const loadMcp = () => import(/* webpackIgnore: true */ /* @vite-ignore */ MCP_MODULE) as Promise<typeof import('../integrations/mcp/index.js')>;
const loadOpenApi = () => import(/* webpackIgnore: true */ /* @vite-ignore */ OPENAPI_MODULE) as Promise<typeof import('../integrations/openapi/index.js')>;

/** Adds tools to an agent (its `withTools`). */
export type AddTools = (tools: readonly AnyTool[]) => void;

/** Spawns an MCP server and adds its tools; the connection is closed when listing them fails. */
export async function addMcpServerStdio(add: AddTools, params: McpStdioParams, tools: McpToolsOptions): Promise<McpConnection> {
  const { connectMcpStdio } = await loadMcp();
  return addMcpTools(add, await connectMcpStdio(params), tools);
}

/** Connects to an MCP server over HTTP and adds its tools; the connection is closed when listing them fails. */
export async function addMcpServerHttp(add: AddTools, params: McpHttpParams, tools: McpToolsOptions): Promise<McpConnection> {
  const { connectMcpHttp } = await loadMcp();
  return addMcpTools(add, await connectMcpHttp(params), tools);
}

/** Adds one tool per operation of an OpenAPI spec file. */
export async function addOpenApiFile(add: AddTools, file: string, config?: OpenApiConfig, filter?: OperationFilter): Promise<OpenApiTools> {
  const { openApiToolsFromFile } = await loadOpenApi();
  return addOpenApiTools(add, await openApiToolsFromFile(file, config, filter));
}

/** Adds one tool per operation of an OpenAPI spec fetched from a URL. */
export async function addOpenApiUrl(add: AddTools, url: string | URL, config?: OpenApiConfig, filter?: OperationFilter): Promise<OpenApiTools> {
  const { openApiToolsFromUrl } = await loadOpenApi();
  return addOpenApiTools(add, await openApiToolsFromUrl(url, config, filter));
}

/** Adds one tool per operation of an OpenAPI spec given as text or an object. */
export async function addOpenApiSpec(add: AddTools, spec: string | object, config?: OpenApiConfig, filter?: OperationFilter): Promise<OpenApiTools> {
  const { openApiToolsFromSpec } = await loadOpenApi();
  return addOpenApiTools(add, await openApiToolsFromSpec(spec, config, filter));
}

async function addMcpTools(add: AddTools, connection: McpConnection, options: McpToolsOptions): Promise<McpConnection> {
  try {
    add(await connection.tools(options));
    return connection;
  } catch (e) {
    await connection.close();
    throw e;
  }
}

function addOpenApiTools(add: AddTools, loaded: OpenApiTools): OpenApiTools {
  add(loaded.tools);
  return loaded;
}
