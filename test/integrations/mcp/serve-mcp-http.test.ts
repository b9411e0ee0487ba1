import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Observable } from 'rxjs';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitResult, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { defineTool, toolUpdate, type AgentEndEvent, type AgentEvent, type ToolEmission } from '../../../src/index.js';
import { serveMcp, type McpAuthorizeContext, type McpHttpServer } from '../../../src/integrations/mcp/index.js';
import { deploy, helperAgent, slowCount, wordcountAgent } from './fixtures/served-agents.js';
import { eventually } from './helpers.js';

/*
 * serveMcp over Streamable HTTP on loopback, proven with the SDK's own Client: tools, the agent
 * tool's progress and cancel, approvals as elicitation, and the endpoint's guards.
 */

const TOKEN = 'test-token';

const failing = defineTool({
  name: 'failing',
  description: 'Always fails',
  parameters: z.object({ why: z.string() }),
  execute: ({ why }) => ({ content: [{ type: 'text', text: `failed: ${why}` }], isError: true }),
});

const streaming = defineTool({
  name: 'streaming',
  description: 'Streams two partial results, then the whole',
  parameters: z.object({}),
  execute: () =>
    new Observable<ToolEmission>((s) => {
      s.next(toolUpdate('part 1'));
      s.next(toolUpdate('part 1, part 2'));
      s.next({ content: [{ type: 'text', text: 'whole' }] });
      s.complete();
    }),
});

let server: McpHttpServer;
let listener: http.Server;
let url: URL;
const events: { event: AgentEvent; tool: string }[] = [];
const asked: McpAuthorizeContext[] = [];

beforeAll(async () => {
  server = await serveMcp(
    { agents: [helperAgent(), wordcountAgent()], tools: [slowCount, failing, streaming, deploy] },
    {
      transport: 'http',
      name: 'served',
      maxBodyBytes: 64 * 1024,
      onEvent: (event, call) => events.push({ event, tool: call.tool }),
      authorize: (req, context) => {
        asked.push(context);
        if (req.headers.authorization !== `Bearer ${TOKEN}`) throw Object.assign(new Error('a bearer token is required'), { status: 401 });
        return !context.tools.includes('failing') || req.headers['x-may-fail'] === 'yes';
      },
    },
  );
  listener = http.createServer(server.handle);
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  url = new URL(`http://127.0.0.1:${(listener.address() as AddressInfo).port}/mcp`);
});

afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => listener?.close(resolve));
});

async function connect(options: { elicit?: (message: string) => ElicitResult; headers?: Record<string, string> } = {}): Promise<Client> {
  const client = new Client({ name: 'sdk-test-client', version: '1.0.0' }, { capabilities: options.elicit ? { elicitation: { form: {} } } : {} });
  if (options.elicit) {
    const answer = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, (request) => answer(request.params.message));
  }
  const headers = { authorization: `Bearer ${TOKEN}`, ...options.headers };
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  return client;
}

describe('serveMcp over Streamable HTTP (the SDK client, loopback)', () => {
  it('lists the tools and calls the agent tool, with progress notifications', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['ask_helper', 'ask_wordcount', 'slow_count', 'failing', 'streaming', 'deploy']);
    const progress: Progress[] = [];
    const result = await client.callTool({ name: 'ask_helper', arguments: { task: 'count to 2' } }, undefined, { onprogress: (p) => progress.push(p) });
    expect(result.content).toEqual([{ type: 'text', text: 'Result: counted to 2' }]);
    expect(progress.map((p) => p.message)).toEqual(['turn 1', 'running slow_count', 'slow_count: counted 1', 'slow_count: counted 2', 'slow_count done', 'turn 2', 'Result: counted to 2']);
    await client.close();
  });

  it('runs calls of the same agent at once, each on its own conversation', async () => {
    const client = await connect();
    const [counted, echoed] = await Promise.all([
      client.callTool({ name: 'ask_helper', arguments: { task: 'count to 5' } }),
      client.callTool({ name: 'ask_helper', arguments: { task: 'hello there' } }),
    ]);
    expect(counted.content).toEqual([{ type: 'text', text: 'Result: counted to 5' }]);
    expect(echoed.content).toEqual([{ type: 'text', text: 'You said: hello there' }]);
    await client.close();
  });

  it('a client cancel mid-run aborts the run: it ends aborted, the running tool is stopped', async () => {
    const client = await connect();
    const controller = new AbortController();
    const call = client.callTool({ name: 'ask_helper', arguments: { task: 'wait' } }, undefined, {
      signal: controller.signal,
      onprogress: (p) => p.message === 'slow_count: counted 1' && controller.abort('enough'),
    });
    await expect(call).rejects.toThrow();
    const end = await eventually(() => events.map((e) => e.event).find((e): e is AgentEndEvent => e.type === 'AgentEnd' && e.stopReason === 'aborted'), 20_000);
    const runEvents = events.map((e) => e.event).filter((e) => (e as { loopId?: string }).loopId === end.loopId);
    expect(runEvents.find((e) => e.type === 'ToolExecutionEnd')).toMatchObject({ toolName: 'slow_count', isError: true });
    await client.close();
  });

  it('answers with structured output, checked by the SDK client against the declared output schema', async () => {
    const client = await connect();
    await client.listTools(); // the client learns the output schemas it checks results against
    const result = await client.callTool({ name: 'ask_wordcount', arguments: { task: 'a b c' } });
    expect(result.structuredContent).toEqual({ words: 3 });
    await client.close();
  });

  it('serves phi-rx tools: isError results, and tool updates as progress', async () => {
    const client = await connect({ headers: { 'x-may-fail': 'yes' } });
    expect(await client.callTool({ name: 'failing', arguments: { why: 'on purpose' } })).toMatchObject({ isError: true, content: [{ type: 'text', text: 'failed: on purpose' }] });
    const invalid = await client.callTool({ name: 'failing', arguments: { why: 3 } });
    expect(invalid.isError).toBe(true);
    expect((invalid.content as { text: string }[])[0]!.text).toMatch(/^Invalid arguments for failing: .*why/);
    const progress: Progress[] = [];
    const streamed = await client.callTool({ name: 'streaming', arguments: {} }, undefined, { onprogress: (p) => progress.push(p) });
    expect(streamed.content).toEqual([{ type: 'text', text: 'whole' }]);
    expect(progress.map((p) => p.message)).toEqual(['part 1', 'part 1, part 2']);
    await client.close();
  });

  it('an approval is asked of the client’s user (elicitation): approved, the tool runs; declined, the model reads why', async () => {
    const messages: string[] = [];
    const approving = await connect({ elicit: (message) => (messages.push(message), { action: 'accept', content: { approved: true } }) });
    expect(await approving.callTool({ name: 'ask_helper', arguments: { task: 'deploy prod' } })).toMatchObject({ content: [{ type: 'text', text: 'Result: deployed prod' }] });
    expect(messages).toEqual(['served asks to run the tool "deploy" with the arguments {"target":"prod"}. Approve?']);
    await approving.close();

    const denying = await connect({ elicit: () => ({ action: 'accept', content: { approved: false, reason: 'not on Friday' } }) });
    expect(await denying.callTool({ name: 'ask_helper', arguments: { task: 'deploy prod' } })).toMatchObject({
      content: [{ type: 'text', text: 'Result: Tool call "deploy" was denied: not on Friday' }],
    });
    expect(await denying.callTool({ name: 'deploy', arguments: { target: 'prod' } })).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'The call of deploy was not approved: not on Friday' }],
    });
    await denying.close();
  });

  it('a client without elicitation gets a clear refusal instead of an approval it cannot give', async () => {
    const client = await connect();
    const result = await client.callTool({ name: 'deploy', arguments: { target: 'prod' } });
    expect(result).toMatchObject({ isError: true });
    expect((result.content as { text: string }[])[0]!.text).toBe(
      'The call of deploy was not approved: the tool call needs approval, and the MCP client "sdk-test-client" does not support elicitation, so its user cannot be asked; the call was not run',
    );
    await client.close();
  });
});

describe('the HTTP endpoint’s guards', () => {
  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${TOKEN}`, ...headers } });
  const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

  it('serveMcp over HTTP requires authorize (or an explicit allow-all)', async () => {
    await expect(serveMcp([slowCount], { transport: 'http' } as never)).rejects.toThrow(/serveMcp: options.authorize is required for HTTP/);
  });

  it('asks authorize with the methods and tools of each request; a throw with status 401 answers 401, false 403', async () => {
    const unauthorized = await post(initialize, { authorization: '' });
    expect(unauthorized.status).toBe(401);
    expect(await unauthorized.json()).toEqual({ error: 'a bearer token is required' });
    expect(asked.at(-1)).toEqual({ sessionId: undefined, methods: ['initialize'], tools: [] });
    const client = await connect();
    await expect(client.callTool({ name: 'failing', arguments: { why: 'x' } })).rejects.toThrow('not allowed to call the tool(s) failing');
    expect(asked.at(-1)).toMatchObject({ methods: ['tools/call'], tools: ['failing'] });
    await client.close();
  });

  it('refuses a body over maxBodyBytes (413), a body that is not JSON (400), another content type (415)', async () => {
    const big = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(70 * 1024) } }));
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error: { message: string } }).error.message).toBe('the request body is over 65536 bytes (options.maxBodyBytes)');
    expect((await post('{not json')).status).toBe(400);
    expect((await post(initialize, { 'content-type': 'text/plain' })).status).toBe(415);
  });

  it('answers malformed requests with a 4xx, inside a session too, and keeps serving', async () => {
    const client = await connect();
    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
    const bodies = ['null', '[]', '"x"', '{}', '[1,2,3]', '{"jsonrpc":"2.0"}', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask_helper","arguments":"task"}}'];
    for (const body of bodies) {
      for (const headers of [{}, { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' }] as Record<string, string>[]) {
        const res = await post(body, headers);
        const text = await res.text();
        expect(res.status, `${body} ${JSON.stringify(headers)} → ${res.status} ${text}`).toBeLessThan(500);
      }
    }
    expect((await client.listTools()).tools.length).toBe(6);
    await client.close();
  });

  it('refuses a page of another origin (403), an unknown session (404), a request without a session (400)', async () => {
    const foreign = await post(initialize, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toEqual({ error: 'origin https://evil.example may not call this server (options.allowedOrigins)' });
    expect((await post(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }), { 'mcp-session-id': 'nope' })).status).toBe(404);
    expect((await post(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }))).status).toBe(400);
  });
});

describe('sessions', () => {
  it('caps open sessions (503 above maxSessions), closes idle ones (then 404), and a throwing onEvent does not end a run', async () => {
    const small = await serveMcp(helperAgent(), {
      transport: 'http',
      authorize: 'allow-all',
      maxSessions: 1,
      sessionIdleMs: 300,
      onEvent: () => {
        throw new Error('a broken listener');
      },
    });
    const smallListener = http.createServer(small.handle);
    await new Promise<void>((resolve) => smallListener.listen(0, '127.0.0.1', resolve));
    const smallUrl = new URL(`http://127.0.0.1:${(smallListener.address() as AddressInfo).port}/mcp`);
    try {
      const first = new Client({ name: 'first', version: '1' });
      const transport = new StreamableHTTPClientTransport(smallUrl);
      await first.connect(transport);
      expect(await first.callTool({ name: 'ask_helper', arguments: { task: 'hello' } })).toMatchObject({ content: [{ type: 'text', text: 'You said: hello' }] });
      expect(small.sessions).toBe(1);
      const second = new Client({ name: 'second', version: '1' });
      await expect(second.connect(new StreamableHTTPClientTransport(smallUrl))).rejects.toThrow(/too many open MCP sessions \(1, options.maxSessions\)/);
      await eventually(() => (small.sessions === 0 ? true : undefined), 10_000);
      const stale = await fetch(smallUrl, {
        method: 'POST',
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': transport.sessionId! },
      });
      expect(stale.status).toBe(404);
      await first.close().catch(() => undefined);
    } finally {
      await small.close();
      await new Promise((resolve) => smallListener.close(resolve));
    }
  });
});

describe('a question decided otherwise', () => {
  it('is withdrawn from the client when the agent’s own approval config decides the call first (asynchronously)', async () => {
    const served = helperAgent();
    served.agent.with({ approval: { decide: () => new Promise((resolve) => setTimeout(() => resolve({ approved: true, reason: 'policy' }), 100)) } });
    const own = await serveMcp(served, { transport: 'http', authorize: 'allow-all' });
    const ownListener = http.createServer(own.handle);
    await new Promise<void>((resolve) => ownListener.listen(0, '127.0.0.1', resolve));
    try {
      let withdrawn = 0;
      const client = new Client({ name: 'asker', version: '1' }, { capabilities: { elicitation: { form: {} } } });
      client.setRequestHandler(ElicitRequestSchema, (_request, extra) =>
        new Promise<ElicitResult>((resolve) =>
          extra.signal.addEventListener('abort', () => {
            withdrawn++;
            resolve({ action: 'cancel' });
          }),
        ),
      );
      await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${(ownListener.address() as AddressInfo).port}/mcp`)));
      // Twice: the SDK's client ignores a cancel of request id 0 (`if (!requestId) return`), the session's first question.
      for (const target of ['prod', 'staging']) {
        expect(await client.callTool({ name: 'ask_helper', arguments: { task: `deploy ${target}` } })).toMatchObject({ content: [{ type: 'text', text: `Result: deployed ${target}` }] });
      }
      await eventually(() => (withdrawn >= 1 ? true : undefined), 10_000);
      await client.close();
    } finally {
      await own.close();
      await new Promise((resolve) => ownListener.close(resolve));
    }
  });
});
