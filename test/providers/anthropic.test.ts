import { afterEach, describe, expect, it } from 'vitest';
import { VirtualTimeScheduler, filter, firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import type { Observable } from 'rxjs';
import { retryBackoff } from '../../src/operators/retry-backoff.js';
import type { StreamEvent } from '../../src/types/provider.js';
import { Agent } from 'undici';
import {
  anthropicHeaders,
  anthropicToolId,
  buildAnthropicRequest,
  createAnthropicProvider,
} from '../../src/providers/anthropic.js';
import { anthropic } from '../../src/providers/models.js';
import type { StreamRequest } from '../../src/types/provider.js';
import type { AssistantMessage } from '../../src/types/message.js';
import { expectAllResponsesEnded, fixtureBody, fixturesAvailable, loadManifest } from './fixture-server.js';
import type { ManifestEntry } from './fixture-server.js';
import {
  assistantMessage,
  callsOf,
  cassetteRequest,
  defaultCache,
  firstUserText,
  recordedTools,
  runProvider,
  runToError,
  streamRequest,
  systemText,
  TEST_KEY,
  thinkingOf,
  useLoopbackProvider,
  user,
  weatherTool,
} from './harness.js';
import { textOf } from '../../src/types/message.js';

const FAMILY = 'anthropic';
const hasFixtures = fixturesAvailable(FAMILY);
const manifest: ManifestEntry[] = hasFixtures ? loadManifest(FAMILY) : [];

const { server, dispatcher, provider } = await useLoopbackProvider((http) => createAnthropicProvider(http));

const model = (id = 'claude-sonnet-4-5') => anthropic(id, { baseUrl: server.url, apiKey: TEST_KEY });

const STOP: Record<string, string> = { end_turn: 'stop', tool_use: 'toolUse', max_tokens: 'length' };

describe.skipIf(!hasFixtures)('anthropic: every recorded stream, served over loopback in arbitrary chunks', () => {
  it.each(manifest.map((entry, i) => [entry.file, entry, i] as const))('%s', async (_file, entry, i) => {
    const facts = entry.facts as ManifestEntry['facts'] & {
      redacted_thinking_blocks: number;
      usage_message_start: Record<string, number>;
      usage_message_delta: Record<string, number>;
    };
    server.enqueue({ body: fixtureBody(FAMILY, entry.file), chunking: { seed: i + 1, maxChunk: 5 + i * 7 } });
    const { message } = await runProvider(provider, streamRequest(model()));

    expect(textOf(message)).toBe(facts.text);
    expect(thinkingOf(message)).toBe(facts.thinking ?? '');
    const thinking = message.content.filter((c) => c.type === 'thinking');
    expect(thinking.some((c) => !c.redacted && (c.signature ?? '').length > 0)).toBe(facts.signature === true);
    expect(thinking.filter((c) => c.redacted && c.signature)).toHaveLength(facts.redacted_thinking_blocks);
    expect(callsOf(message)).toEqual(
      (facts.tool_calls ?? []).map((c) => ({ id: c.id, name: c.name, arguments: c.input })),
    );
    expect(message.stopReason).toBe(STOP[facts.stop_reason ?? '']);
    expect(message.model).toBe(facts.model);
    const start = facts.usage_message_start;
    const final = { ...start, ...facts.usage_message_delta };
    expect(message.usage).toMatchObject({
      input: final['input_tokens'],
      output: final['output_tokens'],
      cacheRead: final['cache_read_input_tokens'],
      cacheWrite: final['cache_creation_input_tokens'],
    });
    expect(message.usage.totalTokens).toBe(
      final['input_tokens']! + final['output_tokens']! + final['cache_read_input_tokens']! + final['cache_creation_input_tokens']!,
    );
    expect(message.provider).toBe('anthropic');
  });

  const recorded = manifest.map((entry) => [entry.file, cassetteRequest(entry)] as const).filter(([, r]) => r !== undefined);

  it.each(recorded)('request body carries the essentials of the recorded request: %s', async (_file, cassette) => {
    const body = cassette!.body;
    server.enqueue({ body: fixtureBody(FAMILY, manifest[0]!.file) });
    const tools = recordedTools(body);
    const thinking = body['thinking'] as { budget_tokens: number } | undefined;
    await runProvider(
      provider,
      streamRequest(model(String(body['model'])), {
        systemPrompt: systemText(body),
        messages: [{ role: 'user', content: [{ type: 'text', text: firstUserText(body) }], timestamp: 0 }],
        tools,
        maxTokens: Number(body['max_tokens']),
        thinkingLevel: thinking ? 'medium' : 'off',
      }),
    );
    const sent = server.requests.at(-1)!;
    expect(sent.url).toBe('/v1/messages');
    const ours = sent.json();
    expect(ours['model']).toBe(body['model']);
    expect(ours['stream']).toBe(true);
    expect(ours['max_tokens']).toBe(body['max_tokens']);
    expect(ours['system']).toEqual(body['system']);
    expect(ours['messages']).toEqual(body['messages']);
    expect(((ours['tools'] ?? []) as Array<{ name: string }>).map((t) => t.name)).toEqual(tools.map((t) => t.name));
    expect(((ours['tools'] ?? []) as Array<{ input_schema: unknown }>).map((t) => t.input_schema)).toEqual(tools.map((t) => t.parameters));
    if (thinking) expect(ours['thinking']).toMatchObject({ type: 'enabled' });
    expect(sent.headers['x-api-key']).toBe(TEST_KEY);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
  });
});

// ---------------------------------------------------------------------------------------------

const SIMPLE = [
  'event: message_start',
  'data: {"type":"message_start","message":{"model":"claude-x","usage":{"input_tokens":5,"output_tokens":1}}}',
  '',
  'event: content_block_start',
  'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
  '',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}',
  '',
  '',
].join('\n');
const TOOL_START = [
  'event: content_block_start',
  'data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"weather","input":{}}}',
  '',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"loc"}}',
  '',
  '',
].join('\n');
const END = [
  'event: message_delta',
  'data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}',
  '',
  'event: message_stop',
  'data: {"type":"message_stop"}',
  '',
  '',
].join('\n');

describe('anthropic: faults end in the documented ProviderError', () => {
  // A failed call must leave no response hanging: every request the server saw has ended.
  afterEach(async () => {
    await expectAllResponsesEnded(server);
  });

  it('429 with retry-after → rateLimited with retryAfterMs and status', async () => {
    server.enqueue({
      status: 429,
      headers: { 'retry-after': '12' },
      body: '{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}',
    });
    const { error, events } = await runToError(provider(streamRequest(model()), {}));
    expect(error.kind).toBe('rateLimited');
    expect(error.retryAfterMs).toBe(12_000);
    expect(error.status).toBe(429);
    expect(error.provider).toBe('anthropic');
    expect(error.message).toContain('per-minute rate limit');
    expect(events).toEqual([]);
  });

  it('529 overloaded → rateLimited; 500 → network; both retryable', async () => {
    server.enqueue(
      { status: 529, body: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' },
      { status: 500, body: '{"type":"error","error":{"type":"api_error","message":"Internal server error"}}' },
    );
    const overloaded = (await runToError(provider(streamRequest(model()), {}))).error;
    expect([overloaded.kind, overloaded.status, overloaded.retryable]).toEqual(['rateLimited', 529, true]);
    const internal = (await runToError(provider(streamRequest(model()), {}))).error;
    expect([internal.kind, internal.status, internal.retryable]).toEqual(['network', 500, true]);
  });

  it('401 → auth, and the key never appears in the message', async () => {
    server.enqueue({ status: 401, body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ${TEST_KEY}"}}` });
    const { error } = await runToError(provider(streamRequest(model()), {}));
    expect(error.kind).toBe('auth');
    expect(error.retryable).toBe(false);
    expect(error.message).not.toContain(TEST_KEY);
  });

  it('400 "prompt is too long" → contextOverflow', async () => {
    server.enqueue({
      status: 400,
      body: '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}',
    });
    const { error } = await runToError(provider(streamRequest(model()), {}));
    expect(error.kind).toBe('contextOverflow');
    expect(error.status).toBe(400);
  });

  it('a mid-stream overloaded_error event → rateLimited', async () => {
    server.enqueue({ body: `${SIMPLE}event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n` });
    const { error, events } = await runToError(provider(streamRequest(model()), {}));
    expect(error.kind).toBe('rateLimited');
    expect(events.map((e) => e.type)).toEqual(['start', 'textDelta']);
  });

  it('connection reset mid-stream → network', async () => {
    const body = SIMPLE + TOOL_START + END;
    server.enqueue({ body, fault: { kind: 'reset', afterBytes: SIMPLE.length + 20 } });
    const { error } = await runToError(provider(streamRequest(model()), {}));
    expect(error.kind).toBe('network');
    expect(error.retryable).toBe(true);
    await server.requests.at(-1)!.socketClosed;
  });

  it('a malformed JSON chunk → other, naming the provider and the data', async () => {
    server.enqueue({ body: `${SIMPLE}event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":\n\n${END}` });
    const { error } = await runToError(provider(streamRequest(model()), {}));
    expect(error.kind).toBe('other');
    expect(error.message).toMatch(/anthropic sent a malformed JSON chunk.*content_block_delta/);
  });

  it('a stream that ends before message_stop → network (retryable)', async () => {
    server.enqueue({ body: SIMPLE + TOOL_START });
    const { error } = await runToError(provider(streamRequest(model()), {}));
    expect(error.kind).toBe('network');
    expect(error.message).toContain('stream ended before message_stop');
  });

  it('a stalled server → network after the idle timeout (virtual time)', async () => {
    const scheduler = new VirtualTimeScheduler();
    const stalling = createAnthropicProvider({ dispatcher, idleTimeoutMs: 30_000 });
    server.enqueue({ body: SIMPLE + TOOL_START + END, fault: { kind: 'stall', afterBytes: SIMPLE.length } });
    const stream = stalling(streamRequest(model()), { scheduler });
    const result = runToError(stream);
    const recorded = await waitFor(() => (server.requests.at(-1)?.bytesSent === SIMPLE.length ? server.requests.at(-1) : undefined));
    await new Promise((r) => setTimeout(r, 30));
    scheduler.flush();
    const { error, events } = await result;
    expect(error.kind).toBe('network');
    expect(error.message).toMatch(/stalled/);
    expect(events.map((e) => e.type)).toEqual(['start', 'textDelta']);
    expect(await recorded.finished).toBe('aborted');
    await recorded.socketClosed;
  });

  it('unsubscribing in the middle of tool-call arguments aborts the request; the server sees the socket close', async () => {
    const slowTail = Array.from({ length: 200 }, () =>
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" "}}\n\n',
    ).join('');
    server.enqueue({ body: SIMPLE + TOOL_START + slowTail + END, delayMs: 3, chunking: { maxChunk: 64 } });
    const delta = await firstValueFrom(provider(streamRequest(model()), {}).pipe(filter((e) => e.type === 'toolCallDelta')));
    expect(delta.type).toBe('toolCallDelta');
    const recorded = server.requests.at(-1)!;
    expect(await recorded.finished).toBe('aborted');
    await recorded.socketClosed;
  });

  it('an aborted signal → cancelled', async () => {
    const controller = new AbortController();
    server.enqueue({ body: SIMPLE + TOOL_START + END, fault: { kind: 'stall', afterBytes: SIMPLE.length } });
    const result = runToError(provider(streamRequest(model()), { signal: controller.signal }));
    await waitFor(() => server.requests.at(-1)?.bytesSent === SIMPLE.length || undefined);
    controller.abort();
    const { error } = await result;
    expect(error.kind).toBe('cancelled');
    await server.requests.at(-1)!.socketClosed;
  });

  it('composed with retryBackoff: 429 (after its retry-after), 529 and 500 are retried; 401 is not', async () => {
    const onRetry: Array<[number, number, string]> = [];
    server.enqueue(
      { status: 429, headers: { 'retry-after-ms': '40' }, body: '{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}' },
      { status: 529, body: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' },
      { status: 500, body: '{"type":"error","error":{"type":"api_error","message":"Internal"}}' },
      { body: SIMPLE + END },
    );
    const before = server.requests.length;
    const started = Date.now();
    const retried = provider(streamRequest(model()), {}).pipe(
      retryBackoff({ maxRetries: 3, initialDelayMs: 1, jitter: 0 }, { onRetry: (n, ms, e) => onRetry.push([n, ms, e.kind]) }),
    );
    const { message } = await runProviderStream(retried);
    expect(textOf(message)).toBe('Hello');
    expect(server.requests.length - before).toBe(4);
    expect(onRetry).toEqual([
      [1, 40, 'rateLimited'],
      [2, 2, 'rateLimited'],
      [3, 4, 'network'],
    ]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(40);

    server.enqueue({ status: 401, body: '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}' }, { body: SIMPLE + END });
    const afterAuth = server.requests.length;
    const { error } = await runToError(provider(streamRequest(model()), {}).pipe(retryBackoff({ maxRetries: 3, initialDelayMs: 1 })));
    expect(error.kind).toBe('auth');
    expect(server.requests.length - afterAuth).toBe(1);
    // The success queued for a retry that must not happen is still there; consume it.
    await runProvider(provider, streamRequest(model()));
  });

  it('completed calls return their connection to the keep-alive pool', async () => {
    const pooled = new Agent();
    const reusing = createAnthropicProvider({ dispatcher: pooled });
    const before = server.acceptedConnections();
    for (let i = 0; i < 10; i++) {
      server.enqueue({ body: SIMPLE + END });
      await runProvider(reusing, streamRequest(model()));
    }
    // undici may open a second socket while the first one is being released; never one per call.
    expect(server.acceptedConnections() - before).toBeLessThanOrEqual(2);
    await pooled.close();
  });

  it('no API key → auth error, and no request is sent', async () => {
    const before = server.requests.length;
    const keyless = createAnthropicProvider({ dispatcher, env: {} });
    const request = streamRequest(model());
    delete request.model.apiKey;
    const { error } = await runToError(keyless(request, {}));
    expect(error.kind).toBe('auth');
    expect(error.message).toContain('ANTHROPIC_API_KEY');
    expect(server.requests.length).toBe(before);
  });
});

/** Collects a stream that may have been resubscribed by retries: only the last attempt's events matter. */
async function runProviderStream(stream: Observable<StreamEvent>): Promise<{ message: AssistantMessage }> {
  const events = await lastValueFrom(stream.pipe(toArray()));
  const done = events.at(-1);
  if (done?.type !== 'done') throw new Error('no done event');
  return { message: done.message };
}

async function waitFor<T>(probe: () => T | undefined): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const value = probe();
    if (value) return value;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('waitFor: condition never held');
}

// ---------------------------------------------------------------------------------------------

describe('buildAnthropicRequest', () => {
  const m = anthropic('claude-sonnet-4-5');
  const assistant = (content: AssistantMessage['content'], provider = 'anthropic', model = 'claude-sonnet-4-5') => assistantMessage(content, provider, model);
  const base = (overrides: Partial<StreamRequest> = {}): StreamRequest => ({ ...streamRequest(m), ...overrides });

  it('maps thinking levels to budgets (API floor 1024) and leaves room in max_tokens', () => {
    expect(buildAnthropicRequest(base({ thinkingLevel: 'off' })).thinking).toBeUndefined();
    expect(buildAnthropicRequest(base({ thinkingLevel: 'minimal' })).thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(buildAnthropicRequest(base({ thinkingLevel: 'medium' })).thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    const high = buildAnthropicRequest(base({ thinkingLevel: 'high', maxTokens: 4000 }));
    expect(high.thinking).toEqual({ type: 'enabled', budget_tokens: 8192 });
    expect(high.max_tokens).toBeGreaterThan(8192);
    expect(buildAnthropicRequest(base({ thinkingLevel: 'high', temperature: 0.2 })).temperature).toBeUndefined();
    expect(buildAnthropicRequest(base({ temperature: 0.2 })).temperature).toBe(0.2);
  });

  it('defaults max_tokens to the model limit, else 8192', () => {
    expect(buildAnthropicRequest(base()).max_tokens).toBe(64_000);
    expect(buildAnthropicRequest({ ...base(), model: anthropic('claude-unknown') }).max_tokens).toBe(8192);
  });

  it('auto caching marks the system prompt, the last tool and the second-to-last message', () => {
    const body = buildAnthropicRequest(
      base({
        cacheConfig: defaultCache,
        tools: [weatherTool, { ...weatherTool, name: 'other' }],
        messages: [user('one'), assistant([{ type: 'text', text: 'two' }], 'anthropic'), user('three')],
      }),
    );
    expect(body.system![0]!.cache_control).toEqual({ type: 'ephemeral' });
    expect(body.tools![0]!.cache_control).toBeUndefined();
    expect(body.tools![1]!.cache_control).toEqual({ type: 'ephemeral' });
    expect(body.messages[1]!.content[0]!.cache_control).toEqual({ type: 'ephemeral' });
    expect(body.messages[2]!.content[0]!.cache_control).toBeUndefined();
  });

  it('manual caching places only the breakpoints asked for; disabled places none', () => {
    const manual = buildAnthropicRequest(
      base({
        cacheConfig: { enabled: true, strategy: { kind: 'manual', cacheSystem: false, cacheTools: true, cacheMessages: false } },
        tools: [weatherTool],
        messages: [user('a'), user('b')],
      }),
    );
    expect(manual.system![0]!.cache_control).toBeUndefined();
    expect(manual.tools![0]!.cache_control).toEqual({ type: 'ephemeral' });
    expect(manual.messages[0]!.content[0]!.cache_control).toBeUndefined();
    const off = JSON.stringify(buildAnthropicRequest(base({ cacheConfig: { enabled: false, strategy: { kind: 'auto' } }, tools: [weatherTool] })));
    expect(off).not.toContain('cache_control');
  });

  it('echoes own thinking with its signature and redacted thinking as data; foreign thinking becomes text', () => {
    const own = assistant([
      { type: 'thinking', thinking: 'hmm', signature: 'sig-1' },
      { type: 'thinking', thinking: '', signature: 'opaque', redacted: true },
      { type: 'toolCall', id: 'toolu_1', name: 'weather', arguments: { location: 'Rome' } },
    ]);
    const foreign = assistant(
      [
        { type: 'thinking', thinking: 'pondering', signature: 'gemini-sig' },
        { type: 'thinking', thinking: '', signature: 'x', redacted: true },
        { type: 'text', text: 'answer' },
      ],
      'google',
      'gemini-2.5-pro',
    );
    const body = buildAnthropicRequest(
      base({
        messages: [
          user('q'),
          own,
          { role: 'toolResult', toolCallId: 'toolu_1', toolName: 'weather', content: [{ type: 'text', text: 'sunny' }], isError: false, timestamp: 0 },
          foreign,
          user('again'),
        ],
      }),
    );
    expect(body.messages[1]!.content).toEqual([
      { type: 'thinking', thinking: 'hmm', signature: 'sig-1' },
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { location: 'Rome' } },
    ]);
    expect(body.messages[2]).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'sunny' }], is_error: false }],
    });
    expect(body.messages[3]!.content).toEqual([
      { type: 'text', text: '<thinking>\npondering\n</thinking>' },
      { type: 'text', text: 'answer' },
    ]);
  });

  it('merges consecutive tool results into one user turn, sanitises foreign tool ids, sends images as base64', () => {
    const calls = assistant(
      [
        { type: 'toolCall', id: 'functions.add:0', name: 'add', arguments: { a: 1 } },
        { type: 'toolCall', id: 'functions.mul:1', name: 'mul', arguments: { a: 2 } },
      ],
      'groq',
      'kimi',
    );
    const body = buildAnthropicRequest(
      base({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }], timestamp: 0 },
          calls,
          { role: 'toolResult', toolCallId: 'functions.add:0', toolName: 'add', content: [{ type: 'text', text: '1' }], isError: false, timestamp: 0 },
          { role: 'toolResult', toolCallId: 'functions.mul:1', toolName: 'mul', content: [{ type: 'text', text: 'bad' }], isError: true, timestamp: 0 },
        ],
      }),
    );
    expect(body.messages[0]!.content[1]).toEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } });
    expect(body.messages[1]!.content.map((b) => b['id'])).toEqual(['functions_add_0', 'functions_mul_1']);
    expect(body.messages).toHaveLength(3);
    expect(body.messages[2]!.content.map((b) => [b['tool_use_id'], b['is_error']])).toEqual([
      ['functions_add_0', false],
      ['functions_mul_1', true],
    ]);
    expect(anthropicToolId('a'.repeat(80))).toHaveLength(64);
  });

  it('gives an unanswered tool call a synthetic error result and drops empty assistant turns', () => {
    const body = buildAnthropicRequest(
      base({
        messages: [
          user('q'),
          assistant([{ type: 'toolCall', id: 'toolu_9', name: 'weather', arguments: {} }]),
          assistant([]),
          user('next'),
        ],
      }),
    );
    expect(body.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'user']);
    expect(body.messages[2]!.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_9', is_error: true });
  });

  it('uses x-api-key for keys and bearer + OAuth headers for sk-ant-oat tokens', () => {
    expect(anthropicHeaders('sk-ant-api03-x')).toMatchObject({ 'x-api-key': 'sk-ant-api03-x', 'anthropic-version': '2023-06-01' });
    const oauth = anthropicHeaders('sk-ant-oat01-y');
    expect(oauth['authorization']).toBe('Bearer sk-ant-oat01-y');
    expect(oauth['x-api-key']).toBeUndefined();
    expect(oauth['anthropic-beta']).toContain('oauth-2025-04-20');
  });
});

describe('anthropic over standard fetch (browsers, Deno, Bun, workers)', () => {
  it('a provider given `fetch` sends through it and reads the web ReadableStream', async () => {
    const sent: string[] = [];
    const viaFetch = createAnthropicProvider({
      fetch: (input, init) => {
        sent.push(String(input));
        return globalThis.fetch(input, init);
      },
    });
    server.enqueue({ body: SIMPLE + END, chunking: { seed: 9, maxChunk: 11 } });
    const { message } = await runProvider(viaFetch, streamRequest(model()));
    expect(textOf(message)).toBe('Hello');
    expect(message.stopReason).toBe('stop');
    expect(sent).toEqual([`${server.url}/v1/messages`]);
  });
});
