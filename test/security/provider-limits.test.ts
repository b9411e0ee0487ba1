/**
 * A hostile model endpoint cannot make the client hold what it sends: an SSE line (or event, or
 * Bedrock frame) over `maxEventBytes`, or a body over `maxResponseBytes`, fails the call with a
 * non-retryable ProviderError and the socket is closed. Real HTTP over loopback; the server
 * streams from a generator with backpressure, so it never holds the flood either.
 */
import { lastValueFrom, toArray } from 'rxjs';
import { Agent } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { BasicAgent, ProviderError, anthropic, bedrock, google, openai, openaiResponses, type AgentEndEvent, type AgentEvent, type Provider, type StreamRequest } from '../../src/index.js';
import { DEFAULT_CACHE_CONFIG } from '../../src/types/config.js';
import {
  createAnthropicProvider,
  createBedrockProvider,
  createGoogleProvider,
  createOpenAiCompletionsProvider,
  createOpenAiResponsesProvider,
  type ProviderHttpOptions,
} from '../../src/providers/index.js';
import { filler, MiB, startFloodServer, type FloodResponse } from './provider-flood-server.js';

const dispatcher = new Agent();
afterAll(() => dispatcher.close());
const KEY = 'sk-test-limits-0123456789abcdef';

/** An SSE head that starts an event and never ends its `data:` line. */
function* unterminatedLine(total: number): Generator<Uint8Array | string> {
  yield 'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"type":"text_delta","text":"';
  yield* filler(total);
}

async function runAgent(provider: Provider, model: ReturnType<typeof anthropic>): Promise<{ end: AgentEndEvent; events: AgentEvent[] }> {
  const agent = new BasicAgent({ model, provider });
  const events = await lastValueFrom(agent.prompt('hello').pipe(toArray()));
  const end = events.at(-1);
  if (end?.type !== 'AgentEnd') throw new Error('the run did not end with AgentEnd');
  return { end, events };
}

function endError(end: AgentEndEvent): string {
  const last = end.messages.at(-1);
  return last?.role === 'assistant' ? last.errorMessage ?? '' : '';
}

describe('maxEventBytes', () => {
  it('an unterminated SSE line past a lowered limit fails the run at once, not retried, and the socket is closed', async () => {
    const server = await startFloodServer(() => ({ body: () => unterminatedLine(400 * MiB) }));
    try {
      const provider = createAnthropicProvider({ dispatcher, maxEventBytes: 1 * MiB });
      const { end } = await runAgent(provider, anthropic('claude-sonnet-4-5', { baseUrl: server.url, apiKey: KEY }));
      expect(end.stopReason).toBe('error');
      expect(endError(end)).toMatch(/anthropic sent over 1048576 bytes without completing an event .*maxEventBytes/);
      expect(server.requests).toHaveLength(1); // not retryable
      expect(await server.requests[0]!.finished).toBe('client-closed');
      // What the server got out before the client closed: the limit plus the sockets' buffers, not the 400 MiB.
      expect(server.requests[0]!.bytesSent).toBeLessThan(16 * MiB);
    } finally {
      await server.close();
    }
  });

  it('at the default (8 MiB) a 400 MiB line is cut after about 8 MiB, and the heap does not grow by the flood', async () => {
    const server = await startFloodServer(() => ({ body: () => unterminatedLine(400 * MiB) }));
    try {
      const provider = createAnthropicProvider({ dispatcher });
      const model = anthropic('claude-sonnet-4-5', { baseUrl: server.url, apiKey: KEY });
      const before = process.memoryUsage();
      const request: StreamRequest = { model, systemPrompt: '', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }], timestamp: 0 }], tools: [], thinkingLevel: 'off', cacheConfig: DEFAULT_CACHE_CONFIG };
      const error = await lastValueFrom(provider(request, {})).catch((e: unknown) => e);
      const after = process.memoryUsage();
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).retryable).toBe(false);
      expect((error as ProviderError).message).toContain(`over ${8 * MiB} bytes`);
      expect(await server.requests[0]!.finished).toBe('client-closed');
      expect(server.requests[0]!.bytesSent).toBeGreaterThan(8 * MiB);
      expect(server.requests[0]!.bytesSent).toBeLessThan(32 * MiB);
      expect(after.heapUsed + after.arrayBuffers - (before.heapUsed + before.arrayBuffers)).toBeLessThan(100 * MiB);
    } finally {
      await server.close();
    }
  });

  const sse = (head: string): FloodResponse => ({ body: function* () { yield head; yield* filler(64 * MiB); } });
  const cases: Array<[string, (http: ProviderHttpOptions) => Provider, (url: string) => ReturnType<typeof anthropic>, string]> = [
    ['openai completions', (http) => createOpenAiCompletionsProvider(http), (url) => openai('gpt-4o-mini', { baseUrl: url, apiKey: KEY }), 'data: {"id":"x","choices":[{"delta":{"content":"'],
    ['openai responses', (http) => createOpenAiResponsesProvider(http), (url) => openaiResponses('gpt-4o-mini', { baseUrl: url, apiKey: KEY }), 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"'],
    ['google', (http) => createGoogleProvider(http), (url) => google('gemini-2.5-flash', { baseUrl: url, apiKey: KEY }), 'data: {"candidates":[{"content":{"parts":[{"text":"'],
  ];
  for (const [name, create, model, head] of cases) {
    it(`${name}: its reader path is held to the limit`, async () => {
      const server = await startFloodServer(() => sse(head));
      try {
        const { end } = await runAgent(create({ dispatcher, maxEventBytes: 256 * 1024 }), model(server.url));
        expect(endError(end)).toContain('without completing an event');
        expect(server.requests).toHaveLength(1);
        expect(await server.requests[0]!.finished).toBe('client-closed');
      } finally {
        await server.close();
      }
    });
  }

  it('bedrock: a frame whose prelude claims 1 GiB is refused before it is buffered', async () => {
    const prelude = new Uint8Array(12);
    new DataView(prelude.buffer).setUint32(0, 1024 * MiB, false);
    const server = await startFloodServer(() => ({
      headers: { 'content-type': 'application/vnd.amazon.eventstream' },
      body: function* () { yield prelude; yield* filler(64 * MiB); },
    }));
    try {
      const { end } = await runAgent(
        createBedrockProvider({ dispatcher }),
        bedrock('anthropic.claude-sonnet-4-5-20250929-v1:0', { baseUrl: server.url, apiKey: KEY }) as ReturnType<typeof anthropic>,
      );
      expect(endError(end)).toContain(`over ${8 * MiB} bytes without completing an event`);
      expect(server.requests).toHaveLength(1);
      expect(await server.requests[0]!.finished).toBe('client-closed');
      expect(server.requests[0]!.bytesSent).toBeLessThan(16 * MiB);
    } finally {
      await server.close();
    }
  });
});

describe('maxResponseBytes', () => {
  it('a body of endless small events past the limit fails the run, not retried, and the socket is closed', async () => {
    const ping = 'event: ping\ndata: {"type":"ping"}\n\n';
    const server = await startFloodServer(() => ({
      body: function* () {
        yield 'event: message_start\ndata: {"type":"message_start","message":{"id":"m","model":"x","usage":{"input_tokens":1,"output_tokens":0}}}\n\n';
        for (;;) yield ping.repeat(1000);
      },
    }));
    try {
      const provider = createAnthropicProvider({ dispatcher, maxResponseBytes: 2 * MiB });
      const { end } = await runAgent(provider, anthropic('claude-sonnet-4-5', { baseUrl: server.url, apiKey: KEY }));
      expect(endError(end)).toMatch(/anthropic sent a response body over the 2097152-byte limit \(maxResponseBytes\)/);
      expect(server.requests).toHaveLength(1);
      expect(await server.requests[0]!.finished).toBe('client-closed');
    } finally {
      await server.close();
    }
  });
});
