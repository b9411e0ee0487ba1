import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { lastValueFrom, toArray } from 'rxjs';
import { BasicAgent, textOf, type AgentEvent, type AnyTool, type ToolResultMessage } from '../../../src/index.js';
import { scriptedModel, scriptedProvider } from '../../../src/testing/index.js';
import { connectMcpHttp, serveMcp, type McpConnection, type McpElicitation, type McpHttpServer } from '../../../src/integrations/mcp/index.js';
import { helperAgent } from './fixtures/served-agents.js';

/*
 * One phi-rx agent using another as an MCP tool: the helper served by serveMcp over HTTP, the
 * caller connected with phi-rx's own MCP client; the helper's approval reaches the caller's side as
 * an elicitation, answered through the connection's onElicitation like an approval.
 */

let served: McpHttpServer;
let listener: http.Server;
let url: string;

beforeAll(async () => {
  served = await serveMcp(helperAgent(), { transport: 'http', authorize: 'allow-all', name: 'helper-server' });
  listener = http.createServer(served.handle);
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  await served?.close();
  await new Promise((resolve) => listener?.close(resolve));
});

/** A caller whose model asks the helper `task`, then repeats what the helper answered. */
function caller(tools: AnyTool[], task: string): BasicAgent {
  const provider = scriptedProvider([
    { toolCalls: [{ name: 'helper__ask_helper', arguments: { task }, id: 'c1' }] },
    (request) => ({ text: `The helper said: ${textOf(request.messages.at(-1) as ToolResultMessage)}` }),
  ]);
  return new BasicAgent({ model: scriptedModel(), provider, retry: false, tools });
}

async function withConnection<T>(onElicitation: ((request: McpElicitation) => { approved: boolean; reason?: string }) | undefined, work: (c: McpConnection) => Promise<T>): Promise<T> {
  const connection = await connectMcpHttp({ url, ...(onElicitation ? { onElicitation } : {}) });
  try {
    return await work(connection);
  } finally {
    await connection.close();
  }
}

describe('a phi-rx agent calling another one served over MCP', () => {
  it('gets the served agent’s answer as the tool result, its progress as ProgressMessage events', async () => {
    await withConnection(undefined, async (connection) => {
      const agent = caller(await connection.tools({ prefix: 'helper' }), 'count to 2');
      const events = await lastValueFrom(agent.prompt('ask the helper').pipe(toArray()));
      expect(textOf(agent.messages.at(-1) as ToolResultMessage)).toBe('The helper said: Result: counted to 2');
      const progress = events.flatMap((e) => (e.type === 'ProgressMessage' ? [e.text] : []));
      expect(progress).toContain('running slow_count (2)');
    });
  });

  it('answers the served agent’s approval through onElicitation, shown on the running call', async () => {
    const asked: McpElicitation[] = [];
    await withConnection((request) => (asked.push(request), { approved: true }), async (connection) => {
      const agent = caller(await connection.tools({ prefix: 'helper' }), 'deploy prod');
      const events: AgentEvent[] = await lastValueFrom(agent.prompt('deploy it').pipe(toArray()));
      expect(textOf(agent.messages.at(-1) as ToolResultMessage)).toBe('The helper said: Result: deployed prod');
      expect(asked).toEqual([
        expect.objectContaining({
          toolCallId: 'c1',
          toolName: 'helper__ask_helper',
          args: { task: 'deploy prod' },
          server: 'helper-server',
          message: 'helper-server asks to run the tool "deploy" with the arguments {"target":"prod"}. Approve?',
        }),
      ]);
      expect(events.some((e) => e.type === 'ProgressMessage' && e.toolCallId === 'c1' && e.text.startsWith('waiting for an answer: helper-server asks to run the tool "deploy"'))).toBe(true);
    });
  });

  it('a denial’s reason reaches the served agent’s model', async () => {
    await withConnection(() => ({ approved: false, reason: 'not today' }), async (connection) => {
      const agent = caller(await connection.tools({ prefix: 'helper' }), 'deploy prod');
      await lastValueFrom(agent.prompt('deploy it'));
      expect(textOf(agent.messages.at(-1) as ToolResultMessage)).toBe('The helper said: Result: Tool call "deploy" was denied: not today');
    });
  });

  it('without onElicitation, the served agent is told its approval cannot be asked', async () => {
    await withConnection(undefined, async (connection) => {
      const agent = caller(await connection.tools({ prefix: 'helper' }), 'deploy prod');
      await lastValueFrom(agent.prompt('deploy it'));
      expect(textOf(agent.messages.at(-1) as ToolResultMessage)).toMatch(/^The helper said: Result: Tool call "deploy" was denied: the tool call needs approval, and the MCP client "phi-rx" does not support elicitation/);
    });
  });
});
