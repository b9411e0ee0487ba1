import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMcpHttp, connectMcpStdio, McpConnectionError } from '../../../src/integrations/mcp/index.js';
import type { McpConnection } from '../../../src/integrations/mcp/index.js';
import type { Tool } from '../../../src/types/tool.js';
import { byName, everythingServer, resultOf, run, textOf } from './helpers.js';

/** The reference server's own tools we rely on. */
const EXPECTED_TOOLS = ['echo', 'get-sum', 'get-tiny-image', 'get-resource-reference', 'trigger-long-running-operation'];

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts server-everything in an HTTP mode and waits for its "listening" line. */
async function startHttpEverything(mode: 'streamableHttp' | 'sse', atPort?: number): Promise<{ child: ChildProcess; port: number }> {
  const port = atPort ?? (await freePort());
  const child = spawn(process.execPath, [everythingServer, mode], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.resume();
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`server-everything ${mode} did not start: ${seen}`)), 10_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes(`port ${port}`)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`server-everything ${mode} exited with ${code}: ${seen}`)));
  });
  return { child, port };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** The same checks over every transport: same server, same answers. */
function behavesLikeEverything(connect: () => Promise<McpConnection>, transport: string) {
  let server: McpConnection;
  let tools: Tool[];
  beforeAll(async () => {
    server = await connect();
    tools = await server.tools({ prefix: 'everything' });
  });
  afterAll(() => server?.close());

  it(`connects over ${transport} and lists the reference tools`, () => {
    expect(server.transport).toBe(transport);
    expect(server.serverInfo?.name).toBe('mcp-servers/everything');
    const names = tools.map((t) => t.name);
    for (const name of EXPECTED_TOOLS) expect(names).toContain(`everything__${name}`);
    expect(byName(tools, 'everything__get-sum').parameters).toMatchObject({ type: 'object', required: ['a', 'b'] });
  });

  it('calls echo and get-sum', async () => {
    expect(textOf(await resultOf(byName(tools, 'everything__echo'), { message: 'ping' }))).toBe('Echo: ping');
    expect(textOf(await resultOf(byName(tools, 'everything__get-sum'), { a: 2, b: 40 }))).toContain('42');
  });

  it('returns image content as an image', async () => {
    const result = await resultOf(byName(tools, 'everything__get-tiny-image'));
    const image = result.content.find((c) => c.type === 'image');
    expect(image).toMatchObject({ type: 'image', mimeType: 'image/png' });
    expect(image && 'data' in image ? image.data.length : 0).toBeGreaterThan(100);
  });

  it('turns an embedded text resource into text', async () => {
    const result = await resultOf(byName(tools, 'everything__get-resource-reference'), { resourceType: 'Text', resourceId: 1 });
    expect(textOf(result)).toMatch(/\[resource demo:\/\/resource\/dynamic\/text\/1 \(text\/plain\)\]\nResource 1: This is a plaintext resource/);
  });

  it('streams progress notifications of a long-running operation before the result', async () => {
    const emissions = await run(byName(tools, 'everything__trigger-long-running-operation'), { duration: 0.3, steps: 3 });
    expect(emissions).toEqual([
      { kind: 'progress', text: 'progress 1/3' },
      { kind: 'progress', text: 'progress 2/3' },
      { kind: 'progress', text: 'progress 3/3' },
      { content: [{ type: 'text', text: 'Long running operation completed. Duration: 0.3 seconds, Steps: 3.' }] },
    ]);
  });

  it('reports invalid arguments as an error result, not an exception', async () => {
    const result = await resultOf(byName(tools, 'everything__get-sum'), { a: 'two' });
    expect(result.isError).toBe(true);
  });
}

describe('server-everything over stdio', () => {
  behavesLikeEverything(() => connectMcpStdio({ command: process.execPath, args: [everythingServer, 'stdio'] }), 'stdio');
});

describe('server-everything over Streamable HTTP', () => {
  let child: ChildProcess;
  let port = 0;
  beforeAll(async () => ({ child, port } = await startHttpEverything('streamableHttp')));
  afterAll(() => stop(child));
  behavesLikeEverything(() => connectMcpHttp({ url: `http://127.0.0.1:${port}/mcp`, headers: { 'x-test': 'yes' } }), 'streamableHttp');
});

describe('server-everything over the legacy HTTP+SSE transport', () => {
  let child: ChildProcess;
  let port = 0;
  beforeAll(async () => ({ child, port } = await startHttpEverything('sse')));
  afterAll(() => stop(child));
  // The URL is tried with Streamable HTTP first; the server's 404 makes the client fall back to SSE.
  behavesLikeEverything(() => connectMcpHttp({ url: `http://127.0.0.1:${port}/sse` }), 'sse');
});

describe('a Streamable HTTP server that goes away', () => {
  it('turns calls into clear error results until reconnect() finds it back', async () => {
    let { child, port } = await startHttpEverything('streamableHttp');
    const server = await connectMcpHttp({ url: `http://127.0.0.1:${port}/mcp` });
    try {
      const echo = byName(await server.tools(), 'echo');
      expect(textOf(await resultOf(echo, { message: 'one' }))).toBe('Echo: one');

      await stop(child);
      const down = await resultOf(echo, { message: 'two' });
      expect(down.isError).toBe(true);
      expect(textOf(down)).toMatch(/^MCP server mcp-servers\/everything could not be reached to run echo \(.+\); call reconnect\(\) once it is back$/);

      ({ child } = await startHttpEverything('streamableHttp', port));
      await server.reconnect();
      expect(textOf(await resultOf(echo, { message: 'three' }))).toBe('Echo: three');
    } finally {
      await server.close();
      await stop(child);
    }
  });
});

describe('connectMcpHttp errors', () => {
  it('sends the given headers, tries Streamable HTTP then SSE, and names both in the error', async () => {
    const seen: { method?: string; auth?: string }[] = [];
    const http = await import('node:http');
    const fake = http.createServer((req, res) => {
      seen.push({ method: req.method, auth: req.headers.authorization });
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    const { port } = fake.address() as net.AddressInfo;
    try {
      const error = await connectMcpHttp({ url: `http://127.0.0.1:${port}/mcp`, headers: { Authorization: 'Bearer t0k3n' } }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpConnectionError);
      expect((error as Error).message).toMatch(/over Streamable HTTP \(4xx\) nor SSE: /);
      expect(seen[0]).toEqual({ method: 'POST', auth: 'Bearer t0k3n' });
      expect(seen.at(-1)).toEqual({ method: 'GET', auth: 'Bearer t0k3n' });
    } finally {
      fake.closeAllConnections();
      await new Promise((resolve) => fake.close(resolve));
    }
  });

  it('names the server and the transport when nothing listens', async () => {
    const port = await freePort();
    const error = await connectMcpHttp({ url: `http://127.0.0.1:${port}/mcp`, name: 'nobody' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpConnectionError);
    expect((error as Error).message).toMatch(new RegExp(`^Could not connect to MCP server nobody at http://127.0.0.1:${port}/mcp over Streamable HTTP: `));
  });
});
