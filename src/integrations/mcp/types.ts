/**
 * The MCP shapes phi-rx's public types mention, written out structurally so that the types of
 * `phi-rx` and `phi-rx/mcp` type-check without the MCP SDK installed (the SDK is an optional peer).
 * The SDK's own values are assignable to them.
 */

/** Who a client or server says it is in `initialize`. */
export interface McpImplementation {
  name: string;
  version: string;
  title?: string;
  [key: string]: unknown;
}

/** A tool as the server lists it in `tools/list`. */
export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: { type: 'object'; properties?: Record<string, unknown>; required?: string[]; [key: string]: unknown };
  annotations?: { title?: string; readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean; [key: string]: unknown };
  [key: string]: unknown;
}

/** One content block of a `tools/call` result (`text`, `image`, `audio`, `resource`, `resource_link`). */
export interface McpContentBlock {
  type: string;
  [key: string]: unknown;
}
