/**
 * Structured output on the wire: each protocol's request body as the loopback server received it,
 * and the run's validated output (AgentEnd.output) from the stream the server sent back.
 */
import { describe, expect, it } from 'vitest';
import { lastValueFrom } from 'rxjs';
import { z } from 'zod';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { agentLoop, defineTool, runToEnd, userMessage, type AgentEndEvent, type AnyTool, type OutputSchema } from '../../src/index.js';
import { createAnthropicProvider } from '../../src/providers/anthropic.js';
import { openAiCompletionsProvider } from '../../src/providers/openai-completions.js';
import { openaiResponsesProvider } from '../../src/providers/openai-responses.js';
import { googleProvider } from '../../src/providers/google.js';
import { bedrockProvider } from '../../src/providers/bedrock.js';
import { anthropic, openai } from '../../src/providers/models.js';
import type { ModelConfig, Provider } from '../../src/types/provider.js';
import { TEST_KEY, useFixtureServer, useLoopbackProvider } from './harness.js';

const server = await useFixtureServer();
const { server: anthropicServer, provider: anthropicProvider } = await useLoopbackProvider((http) => createAnthropicProvider(http));

const Weather = z.strictObject({ city: z.string(), celsius: z.number() });
const SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, celsius: { type: 'number' } },
  required: ['city', 'celsius'],
  additionalProperties: false,
};
const ANSWER = '{"city":"Paris","celsius":18}';
const DESCRIPTION = 'Give your final answer by calling this tool: its arguments are the answer.';

const lookup: AnyTool = defineTool({
  name: 'lookup',
  description: 'Looks a city up',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => `${city}: 18°C`,
});

async function endOf(provider: Provider, model: ModelConfig, output: OutputSchema = Weather, tools: AnyTool[] = [], thinking = false): Promise<AgentEndEvent> {
  const context = { systemPrompt: 'Be brief.', messages: [], tools };
  return runToEnd(agentLoop([userMessage('Weather in Paris?', 0)], context, { model, provider, output, retry: false, ...(thinking ? { thinkingLevel: 'high' as const } : {}) }));
}

const sse = (events: object[], named = true) =>
  events.map((e) => `${named ? `event: ${(e as { type: string }).type}\n` : ''}data: ${JSON.stringify(e)}\n\n`).join('');

describe('structured output, provider-native', () => {
  it('OpenAI Chat Completions sends response_format json_schema (strict for a closed schema) and reads the JSON text', async () => {
    const chunks = ['{"city":', '"Paris","cel', 'sius":18}'].map((content) => ({ choices: [{ index: 0, delta: { content } }] }));
    server.enqueue({ body: `${sse([...chunks, { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }], false)}data: [DONE]\n\n` });
    const end = await endOf(openAiCompletionsProvider, openai('gpt-4o-mini', { baseUrl: `${server.url}/v1`, apiKey: TEST_KEY }));
    expect(server.requests.at(-1)!.json()['response_format']).toEqual({ type: 'json_schema', json_schema: { name: 'output', schema: SCHEMA, strict: true } });
    expect(end.output).toEqual({ city: 'Paris', celsius: 18 });
  });

  it('OpenAI Responses sends text.format json_schema', async () => {
    server.enqueue({
      body: sse([
        { type: 'response.created', response: { model: 'gpt-test', status: 'in_progress' } },
        { type: 'response.output_item.added', output_index: 0, item: { type: 'message', id: 'msg_1' } },
        { type: 'response.output_text.delta', output_index: 0, delta: ANSWER.slice(0, 11) },
        { type: 'response.output_text.delta', output_index: 0, delta: ANSWER.slice(11) },
        { type: 'response.completed', response: { model: 'gpt-test', status: 'completed', usage: { input_tokens: 3, output_tokens: 5, total_tokens: 8 } } },
      ]),
    });
    const model: ModelConfig = { id: 'gpt-test', api: 'openai-responses', provider: 'openai', baseUrl: server.url, apiKey: TEST_KEY };
    const output = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const end = await endOf(openaiResponsesProvider, model, output);
    expect(server.requests.at(-1)!.json()['text']).toEqual({ format: { type: 'json_schema', name: 'output', schema: output, strict: false } });
    expect(end.output).toEqual({ city: 'Paris', celsius: 18 });
  });

  it('Gemini sends responseMimeType application/json with responseJsonSchema (full JSON Schema)', async () => {
    const chunk = (o: object) => `data: ${JSON.stringify(o)}\r\n\r\n`;
    server.enqueue({
      body:
        chunk({ candidates: [{ content: { parts: [{ text: ANSWER.slice(0, 9) }], role: 'model' } }], modelVersion: 'gemini-test' }) +
        chunk({ candidates: [{ content: { parts: [{ text: ANSWER.slice(9) }], role: 'model' }, finishReason: 'STOP' }], modelVersion: 'gemini-test' }),
    });
    const model: ModelConfig = { id: 'gemini-test', api: 'google-generative-ai', provider: 'google', baseUrl: server.url, apiKey: TEST_KEY };
    const end = await endOf(googleProvider, model);
    const config = server.requests.at(-1)!.json()['generationConfig'] as Record<string, unknown>;
    expect(config['responseMimeType']).toBe('application/json');
    expect(config['responseJsonSchema']).toEqual(SCHEMA);
    expect(config).not.toHaveProperty('responseSchema');
    expect(end.output).toEqual({ city: 'Paris', celsius: 18 });
  });
});

/** An Anthropic stream with one tool_use block streaming `json` as its input. */
function anthropicToolUse(name: string, json: string, id = 'toolu_1'): string {
  const half = Math.floor(json.length / 2);
  return sse([
    { type: 'message_start', message: { model: 'claude-x', usage: { input_tokens: 5, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id, name, input: {} } },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: json.slice(0, half) } },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: json.slice(half) } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } },
    { type: 'message_stop' },
  ]);
}

describe('structured output, a forced output tool', () => {
  const claude = () => anthropic('claude-sonnet-4-5', { baseUrl: anthropicServer.url, apiKey: TEST_KEY });

  it('Anthropic: the output tool forced by name; its arguments are the answer (text, stop), and the run ends with the output', async () => {
    anthropicServer.enqueue({ body: anthropicToolUse('output', ANSWER) });
    const end = await endOf(anthropicProvider, claude());
    const body = anthropicServer.requests.at(-1)!.json();
    expect(body['tools']).toEqual([{ name: 'output', description: DESCRIPTION, input_schema: SCHEMA, cache_control: { type: 'ephemeral' } }]);
    expect(body['tool_choice']).toEqual({ type: 'tool', name: 'output', disable_parallel_tool_use: true });
    const answer = end.messages.at(-1)!;
    expect(answer).toMatchObject({ role: 'assistant', stopReason: 'stop', content: [{ type: 'text', text: ANSWER }] });
    expect(end.output).toEqual({ city: 'Paris', celsius: 18 });
  });

  it('Anthropic with other tools: tool_choice any; a real tool call runs, then the output tool ends the run', async () => {
    anthropicServer.enqueue({ body: anthropicToolUse('lookup', '{"city":"Paris"}') });
    anthropicServer.enqueue({ body: anthropicToolUse('output', ANSWER, 'toolu_2') });
    const end = await endOf(anthropicProvider, claude(), Weather, [lookup]);
    const [first, second] = anthropicServer.requests.slice(-2).map((r) => r.json());
    expect((first!['tools'] as Array<{ name: string }>).map((t) => t.name)).toEqual(['lookup', 'output']);
    expect(first!['tool_choice']).toEqual({ type: 'any', disable_parallel_tool_use: true });
    // The tool ran and the model saw its result before answering.
    expect(JSON.stringify(second!['messages'])).toContain('Paris: 18°C');
    expect(end.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    expect(end.output).toEqual({ city: 'Paris', celsius: 18 });
  });

  it('Anthropic with thinking on: tool_choice auto (the API refuses forced tool use with thinking)', async () => {
    anthropicServer.enqueue({ body: anthropicToolUse('output', ANSWER) });
    await endOf(anthropicProvider, claude(), Weather, [], true);
    expect(anthropicServer.requests.at(-1)!.json()['tool_choice']).toEqual({ type: 'auto' });
  });

  const codec = new EventStreamCodec(toUtf8, fromUtf8);
  const frame = (eventType: string, payload: object): Uint8Array =>
    codec.encode({
      headers: {
        ':event-type': { type: 'string', value: eventType },
        ':message-type': { type: 'string', value: 'event' },
        ':content-type': { type: 'string', value: 'application/json' },
      },
      body: fromUtf8(JSON.stringify(payload)),
    });
  const bedrockToolUse = (name: string, json: string): Uint8Array =>
    Buffer.concat([
      frame('messageStart', { role: 'assistant' }),
      frame('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: 'tooluse_1', name } } }),
      frame('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: json.slice(0, 7) } } }),
      frame('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: json.slice(7) } } }),
      frame('contentBlockStop', { contentBlockIndex: 0 }),
      frame('messageStop', { stopReason: 'tool_use' }),
      frame('metadata', { usage: { inputTokens: 4, outputTokens: 6, totalTokens: 10 } }),
    ]);
  const nova = (): ModelConfig => ({ id: 'us.amazon.nova-micro-v1:0', api: 'bedrock-converse-stream', provider: 'bedrock', baseUrl: server.url, region: 'us-east-1', apiKey: TEST_KEY });
  const EVENTSTREAM = { 'content-type': 'application/vnd.amazon.eventstream' };

  it('Bedrock Converse: the output tool and toolChoice { tool }; its arguments are the answer', async () => {
    server.enqueue({ body: bedrockToolUse('output', ANSWER), headers: EVENTSTREAM });
    const end = await endOf(bedrockProvider, nova());
    const toolConfig = server.requests.at(-1)!.json()['toolConfig'];
    expect(toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'output', description: DESCRIPTION, inputSchema: { json: SCHEMA } } }, { cachePoint: { type: 'default' } }],
      toolChoice: { tool: { name: 'output' } },
    });
    expect(end.messages.at(-1)).toMatchObject({ stopReason: 'stop', content: [{ type: 'text', text: ANSWER }] });
    expect(end.output).toEqual({ city: 'Paris', celsius: 18 });
  });

  it('Bedrock with other tools: toolChoice { any }', async () => {
    server.enqueue({ body: bedrockToolUse('output', ANSWER), headers: EVENTSTREAM });
    const end = await endOf(bedrockProvider, nova(), Weather, [lookup]);
    const toolConfig = server.requests.at(-1)!.json()['toolConfig'] as { tools: Array<{ toolSpec?: { name: string } }>; toolChoice: unknown };
    expect(toolConfig.tools.map((t) => t.toolSpec?.name ?? 'cachePoint')).toEqual(['lookup', 'output', 'cachePoint']);
    expect(toolConfig.toolChoice).toEqual({ any: {} });
    expect(end.output).toEqual({ city: 'Paris', celsius: 18 });
  });

  it('without output, no output tool and no tool choice are sent', async () => {
    anthropicServer.enqueue({ body: anthropicToolUse('lookup', '{"city":"Rome"}') });
    await lastValueFrom(anthropicProvider({ model: claude(), systemPrompt: '', messages: [userMessage('x', 0)], tools: [], thinkingLevel: 'off', cacheConfig: { enabled: false, strategy: { kind: 'disabled' } } }, {}));
    const body = anthropicServer.requests.at(-1)!.json();
    expect(body).not.toHaveProperty('tools');
    expect(body).not.toHaveProperty('tool_choice');
  });
});
