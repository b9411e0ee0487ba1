/**
 * A model fallback across providers over loopback: two real node:http servers speak different
 * wires. The OpenAI-compatible one answers the first call (reasoning and a tool call whose id
 * Anthropic would reject), then 503 until the retry budget is spent; the Anthropic one answers.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { agentLoop, userMessage, type AgentEvent, type AssistantMessage } from '../../src/index.js';
import { anthropic, createAnthropicProvider, createOpenAiCompletionsProvider, openai } from '../../src/providers/index.js';
import { getLoop, InMemorySessionStore, recordSession, SessionRecorder } from '../../src/session/index.js';
import { addTool, agentEnd, context, events } from '../agent/helpers.js';

interface Reply {
  status: number;
  body: string;
}

interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

async function startServer(replies: Array<Reply>): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      seen.push({ url: req.url ?? '', headers: req.headers, body: JSON.parse(raw) as Record<string, unknown> });
      const reply = replies[Math.min(seen.length - 1, replies.length - 1)]!;
      res.writeHead(reply.status, { 'content-type': reply.status === 200 ? 'text/event-stream' : 'application/json' });
      res.end(reply.body);
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

/** An OpenAI chat-completions reply: reasoning, then a call of `add` with an id Anthropic's pattern rejects. */
const openAiToolCall: Reply = {
  status: 200,
  body: `${sse([
    chatChunk({ role: 'assistant', content: '', reasoning_content: 'I should add these.' }),
    chatChunk({ tool_calls: [{ index: 0, id: 'functions.add:0', type: 'function', function: { name: 'add', arguments: '{"a":2,' } }] }),
    chatChunk({ tool_calls: [{ index: 0, function: { arguments: '"b":3}' } }] }),
    chatChunk({}, 'tool_calls'),
  ])}data: [DONE]\n\n`,
};
const unavailable: Reply = { status: 503, body: JSON.stringify({ error: { message: 'Service temporarily unavailable', type: 'server_error' } }) };

function anthropicSse(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}
const anthropicAnswer: Reply = {
  status: 200,
  body: [
    anthropicSse('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], usage: { input_tokens: 30, output_tokens: 1 } } }),
    anthropicSse('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    anthropicSse('content_block_delta', { index: 0, delta: { type: 'text_delta', text: '2 + 3 = 5' } }),
    anthropicSse('content_block_stop', { index: 0 }),
    anthropicSse('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 7 } }),
    anthropicSse('message_stop', {}),
  ].join(''),
};

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

describe('model fallback from an OpenAI-compatible server to an Anthropic one, over loopback', () => {
  it('completes the run on the second, announces and records ModelFallback, and sends it the history in its own terms', async () => {
    const openAiServer = await startServer([openAiToolCall, unavailable]);
    const anthropicServer = await startServer([anthropicAnswer]);
    closers.push(openAiServer.close, anthropicServer.close);
    const gpt = openai('gpt-4o', { baseUrl: `${openAiServer.url}/v1`, apiKey: 'sk-openai-secret' });
    const claude = anthropic('claude-sonnet-4-5', { baseUrl: anthropicServer.url, apiKey: 'sk-ant-key' });
    const recorder = new SessionRecorder();

    const all: AgentEvent[] = await events(
      agentLoop([userMessage('What is 2 + 3?', 0)], context([addTool]), {
        model: gpt,
        provider: createOpenAiCompletionsProvider(),
        models: [gpt, { model: claude, provider: createAnthropicProvider() }],
        retry: { maxRetries: 2, initialDelayMs: 1, jitter: 0 },
        cacheConfig: { enabled: false, strategy: { kind: 'disabled' } }, // no cache_control marks in the compared body
      }).pipe(recordSession(recorder)),
    );

    // The OpenAI server got the first turn and the two retries of the second (503 each), then no more.
    expect(openAiServer.seen).toHaveLength(4);
    expect(all.filter((e) => e.type === 'RetryScheduled')).toHaveLength(2);
    const fallback = all.find((e) => e.type === 'ModelFallback');
    expect(fallback).toMatchObject({
      turnIndex: 1, reason: 'retriesExhausted', from: { provider: 'openai', id: 'gpt-4o' }, to: { provider: 'anthropic', id: 'claude-sonnet-4-5' },
      errorMessage: expect.stringMatching(/^network: openai HTTP 503: Service temporarily unavailable/),
    });
    const end = agentEnd(all);
    expect(end.stopReason).toBe('stop');
    const answer = end.messages.at(-1) as AssistantMessage;
    expect(answer).toMatchObject({ role: 'assistant', provider: 'anthropic', content: [{ type: 'text', text: '2 + 3 = 5' }] });

    // The Anthropic request: its own key (never OpenAI's), and the OpenAI turn translated.
    expect(anthropicServer.seen).toHaveLength(1);
    const sent = anthropicServer.seen[0]!;
    expect(sent.url).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe('sk-ant-key');
    expect(JSON.stringify(sent.headers)).not.toContain('sk-openai-secret');
    expect(sent.body.model).toBe('claude-sonnet-4-5');
    expect(sent.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'What is 2 + 3?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: '<thinking>\nI should add these.\n</thinking>' }, // foreign reasoning as text
          { type: 'tool_use', id: 'functions_add_0', name: 'add', input: { a: 2, b: 3 } }, // id in Anthropic's pattern
        ],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'functions_add_0', content: [{ type: 'text', text: '5' }], is_error: false }],
      },
    ]);

    // The saved session has the fallback among the loop's events, after a round trip through a store.
    const store = new InMemorySessionStore();
    await store.save(recorder.getSession('session-1')!);
    const loop = getLoop(await store.load('session-1'), 'session-1.scripted.1')!;
    const recorded = loop.events.find((e) => e.type === 'ModelFallback');
    expect(recorded).toEqual(fallback);
  });
});
