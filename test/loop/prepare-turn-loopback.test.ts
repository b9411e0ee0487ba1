/**
 * `prepareTurn` switches providers mid-run over loopback: an OpenAI-compatible server takes the
 * first turn (reasoning and a tool call whose id Anthropic would reject), an Anthropic one the
 * second, which gets the whole history in its own terms and its own key only.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { agentLoop, userMessage, type AgentEvent, type AssistantMessage } from '../../src/index.js';
import { anthropic, createAnthropicProvider, createOpenAiCompletionsProvider, openai } from '../../src/providers/index.js';
import { addTool, agentEnd, context, events } from '../agent/helpers.js';

interface Seen {
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

async function startServer(body: string): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      seen.push({ headers: req.headers, body: JSON.parse(raw) as Record<string, unknown> });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

const sse = (events: unknown[]): string => events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('');
const chatChunk = (delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> =>
  ({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: finish }] });
const openAiToolCall = `${sse([
  chatChunk({ role: 'assistant', content: '', reasoning_content: 'I should add these.' }),
  chatChunk({ tool_calls: [{ index: 0, id: 'functions.add:0', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } }] }),
  chatChunk({}, 'tool_calls'),
])}data: [DONE]\n\n`;
const anthropicSse = (type: string, data: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const anthropicAnswer = [
  anthropicSse('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], usage: { input_tokens: 30, output_tokens: 1 } } }),
  anthropicSse('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  anthropicSse('content_block_delta', { index: 0, delta: { type: 'text_delta', text: '2 + 3 = 5' } }),
  anthropicSse('content_block_stop', { index: 0 }),
  anthropicSse('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 7 } }),
  anthropicSse('message_stop', {}),
].join('');

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

describe('prepareTurn across two providers, over loopback', () => {
  it('sends the second turn to Anthropic with the OpenAI turn translated, and only Anthropic\'s key', async () => {
    const openAiServer = await startServer(openAiToolCall);
    const anthropicServer = await startServer(anthropicAnswer);
    closers.push(openAiServer.close, anthropicServer.close);
    const gpt = openai('gpt-4o', { baseUrl: `${openAiServer.url}/v1`, apiKey: 'sk-openai-secret' });
    const claude = anthropic('claude-sonnet-4-5', { baseUrl: anthropicServer.url, apiKey: 'sk-ant-key' });

    const all: AgentEvent[] = await events(
      agentLoop([userMessage('What is 2 + 3?', 0)], context([addTool]), {
        model: gpt,
        provider: createOpenAiCompletionsProvider(),
        prepareTurn: ({ turnIndex }) => (turnIndex === 0 ? undefined : { model: { model: claude, provider: createAnthropicProvider() } }),
        cacheConfig: { enabled: false, strategy: { kind: 'disabled' } },
      }),
    );

    expect(openAiServer.seen).toHaveLength(1);
    expect(anthropicServer.seen).toHaveLength(1);
    const sent = anthropicServer.seen[0]!;
    expect(sent.headers['x-api-key']).toBe('sk-ant-key');
    expect(JSON.stringify(sent.headers)).not.toContain('sk-openai-secret');
    expect(sent.body.model).toBe('claude-sonnet-4-5');
    expect(sent.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'What is 2 + 3?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: '<thinking>\nI should add these.\n</thinking>' },
          { type: 'tool_use', id: 'functions_add_0', name: 'add', input: { a: 2, b: 3 } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'functions_add_0', content: [{ type: 'text', text: '5' }], is_error: false }] },
    ]);
    const end = agentEnd(all);
    expect(end.stopReason).toBe('stop');
    expect(end.messages.filter((m): m is AssistantMessage => m.role === 'assistant').map((m) => m.provider)).toEqual(['openai', 'anthropic']);
  });
});
