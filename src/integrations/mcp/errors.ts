/** Connecting to (or listing the tools of) an MCP server failed. The message names the server and why. */
export class McpConnectionError extends Error {
  override readonly name = 'McpConnectionError';
  constructor(
    /** The server's name as the connection knows it. */
    readonly server: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
