import { createServer } from 'node:http';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMcpHttp, connectMcpStdio, McpConnectionError } from '../../../src/integrations/mcp/index.js';
import { byName, eventually, repoRoot, resultOf, run, testServer, textOf } from './helpers.js';

describe('MCP: a call pending when close() runs', () => {
  it('ends with a "connection closed" error result, not advice to reconnect', async () => {
    const server = await connectMcpStdio({ command: process.execPath, args: ['--import', 'tsx', testServer], cwd: repoRoot });
    const tools = await server.tools();
    const pending = run(byName(tools, 'wait_for_cancel'));
    // The call is on the server once the stats tool (served after it, in order) answers.
    await resultOf(byName(tools, 'stats'));
    await server.close();
    const emissions = await pending;
    const result = emissions.at(-1) as { isError?: boolean; content: { type: string; text?: string }[] };
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('MCP tool wait_for_cancel on server phi-rx-test-server ended: connection closed by close() while the call was pending');
    expect(textOf(result)).not.toMatch(/reconnect/);
    expect(server.status).toBe('closed');
    // And a call after close() says the server is closed.
    expect(textOf(await resultOf(byName(tools, 'echo'), { text: 'x' }))).toBe('MCP server phi-rx-test-server is closed');
  });
});

/** A real MCP server over Streamable HTTP (the SDK's, stateless) behind a bearer-token check. */
async function startAuthServer(token: string): Promise<{ url: string; reject(status: 401 | 403 | undefined): void; close(): Promise<void> }> {
  let forced: 401 | 403 | undefined;
  const http: HttpServer = createServer(async (req, res) => {
    if (forced !== undefined || req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(forced ?? 401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' });
      return res.end(JSON.stringify({ error: 'invalid_token' }));
    }
    const mcp = new McpServer({ name: 'auth-test', version: '1.0.0' });
    mcp.registerTool('ping', { description: 'Answers pong' }, () => ({ content: [{ type: 'text', text: 'pong' }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close());
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    reject: (status) => void (forced = status),
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

describe('MCP over Streamable HTTP: auth failures name the HTTP status', () => {
  let server: Awaited<ReturnType<typeof startAuthServer>>;
  beforeAll(async () => {
    server = await startAuthServer('right-token');
  });
  afterAll(() => server.close());

  it('a wrong token fails the connection with "HTTP 401", without falling back to SSE', async () => {
    const error = await connectMcpHttp({ url: server.url, name: 'secured', headers: { Authorization: 'Bearer wrong' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpConnectionError);
    expect((error as Error).message).toMatch(new RegExp(`^Could not connect to MCP server secured at ${server.url} over Streamable HTTP: HTTP 401 Unauthorized: `));
  });

  it('a token revoked mid-session fails the call with a result naming HTTP 403', async () => {
    const connection = await connectMcpHttp({ url: server.url, name: 'secured', headers: { Authorization: 'Bearer right-token' } });
    try {
      const [ping] = await connection.tools();
      expect(textOf(await resultOf(ping!))).toBe('pong');
      server.reject(403);
      const result = await resultOf(ping!);
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^MCP server secured refused ping: HTTP 403 Forbidden: .*; check the credentials$/);
    } finally {
      server.reject(undefined);
      await connection.close();
      await eventually(() => (connection.status === 'closed' ? true : undefined));
    }
  });
});
