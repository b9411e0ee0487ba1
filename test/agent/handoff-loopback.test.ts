/**
 * A handoff across providers over loopback: two real node:http servers speak different wires. The
 * triage agent runs on the OpenAI-compatible one and calls its handoff tool (with an id Anthropic's
 * pattern rejects); billing runs on the Anthropic one, which gets billing's system prompt and tools
 * and the history translated into its own terms, as a model fallback's would be.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentLoop, defineTool, handoff, textOf, userMessage, type AgentSpec, type AssistantMessage } from '../../src/index.js';
import { anthropic, createAnthropicProvider, createOpenAiCompletionsProvider, openai } from '../../src/providers/index.js';
import { agentEnd, context, events } from './helpers.js';

async function startServer(replies: string[]): Promise<{ url: string; seen: Record<string, unknown>[]; close(): Promise<void> }> {
  const seen: Record<string, unknown>[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      seen.push(JSON.parse(raw) as Record<string, unknown>);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(replies[Math.min(seen.length - 1, replies.length - 1)]);
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

const sse = (events: unknown[]): string => `${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('')}data: [DONE]\n\n`;
const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: finish }] });
const handoffCall = sse([
  chunk({ role: 'assistant', content: '' }),
  chunk({ tool_calls: [{ index: 0, id: 'functions.transfer_to_billing:0', type: 'function', function: { name: 'transfer_to_billing', arguments: '{"reason":' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '"a double charge"}' } }] }),
  chunk({}, 'tool_calls'),
]);
const anthropicSse = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const billingAnswer = [
  anthropicSse('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], usage: { input_tokens: 30, output_tokens: 1 } } }),
  anthropicSse('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  anthropicSse('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Billing: I see the double charge.' } }),
  anthropicSse('content_block_stop', { index: 0 }),
  anthropicSse('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } }),
  anthropicSse('message_stop', {}),
].join('');

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

describe('a handoff from an agent on an OpenAI-compatible server to one on an Anthropic server, over loopback', () => {
  it('billing runs on its own provider with its prompt and tools, and gets the conversation in Anthropic\'s terms', async () => {
    const openAiServer = await startServer([handoffCall]);
    const anthropicServer = await startServer([billingAnswer]);
    closers.push(openAiServer.close, anthropicServer.close);
    const invoice = defineTool({ name: 'invoice', description: 'Finds an invoice', parameters: z.object({ id: z.string() }), execute: ({ id }) => `invoice ${id}` });
    const billing: AgentSpec = {
      name: 'billing', systemPrompt: 'You answer billing questions.', tools: [invoice],
      model: anthropic('claude-sonnet-4-5', { baseUrl: anthropicServer.url, apiKey: 'sk-ant-key' }), provider: createAnthropicProvider(),
    };
    const gpt = openai('gpt-4o', { baseUrl: `${openAiServer.url}/v1`, apiKey: 'sk-openai-secret' });

    const all = await events(agentLoop([userMessage('I was charged twice', 0)], { ...context([handoff(billing)]), systemPrompt: 'You route.' }, {
      model: gpt, provider: createOpenAiCompletionsProvider(), retry: false, agentName: 'triage',
      cacheConfig: { enabled: false, strategy: { kind: 'disabled' } },
    }));

    expect(all.find((e) => e.type === 'Handoff')).toMatchObject({ from: 'triage', to: 'billing', arguments: { reason: 'a double charge' } });
    const end = agentEnd(all);
    expect(end).toMatchObject({ stopReason: 'stop', agent: 'billing' });
    expect(end.messages.at(-1) as AssistantMessage).toMatchObject({ provider: 'anthropic', content: [{ type: 'text', text: 'Billing: I see the double charge.' }] });
    // Each server got its agent's request: OpenAI the triage prompt and handoff tool, Anthropic billing's.
    expect(openAiServer.seen).toHaveLength(1);
    expect((openAiServer.seen[0]!.tools as { function: { name: string } }[]).map((t) => t.function.name)).toEqual(['transfer_to_billing']);
    expect(anthropicServer.seen).toHaveLength(1);
    const sent = anthropicServer.seen[0]!;
    expect(JSON.stringify(sent.system)).toContain('You answer billing questions.');
    expect((sent.tools as { name: string }[]).map((t) => t.name)).toEqual(['invoice']);
    expect(sent.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'I was charged twice' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'functions_transfer_to_billing_0', name: 'transfer_to_billing', input: { reason: 'a double charge' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'functions_transfer_to_billing_0', content: [{ type: 'text', text: 'Handed off to billing.' }], is_error: false }] },
    ]);
    expect(textOf(end.messages.at(-1) as AssistantMessage)).toBe('Billing: I see the double charge.');
  });
});
