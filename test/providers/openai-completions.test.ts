import { afterEach, describe, expect, it } from 'vitest';
import { VirtualTimeScheduler, filter, firstValueFrom } from 'rxjs';
import {
  buildChatCompletionsRequest,
  createOpenAiCompletionsProvider,
  mistralToolId,
  openAiToolId,
} from '../../src/providers/openai-completions.js';
import { openai, openaiCompatible } from '../../src/providers/models.js';
import type { ModelConfig, StreamRequest } from '../../src/types/provider.js';
import type { AssistantMessage } from '../../src/types/message.js';
import { textOf } from '../../src/types/message.js';
import { expectAllResponsesEnded, fixtureBody, fixturesAvailable, loadManifest } from './fixture-server.js';
import type { ManifestEntry } from './fixture-server.js';
import {
  assistantMessage,
  callsOf,
  cassetteRequest,
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

const FAMILY = 'openai-chat';
const hasFixtures = fixturesAvailable(FAMILY);
const manifest: ManifestEntry[] = hasFixtures ? loadManifest(FAMILY) : [];

const { server, dispatcher, provider } = await useLoopbackProvider((http) => createOpenAiCompletionsProvider(http));

/** The config a user of that backend would write, pointed at the loopback server. */
function modelFor(entry: ManifestEntry, id: string): ModelConfig {
  const url = entry.request_url ?? entry.file;
  const base = { baseUrl: `${server.url}/v1`, apiKey: TEST_KEY };
  if (url.includes('api.openai.com')) return openai(id, base);
  if (url.includes('openrouter')) return openaiCompatible('openrouter', id, base);
  if (url.includes('groq')) return openaiCompatible('groq', id, base);
  if (url.includes('x.ai')) return openaiCompatible('xai', id, base);
  if (url.includes('z.ai')) return openaiCompatible('zai', id, base);
  if (url.includes('deepseek')) return openaiCompatible('deepseek', id, base);
  if (url.includes('mistral')) return openaiCompatible('mistral', id, base);
  if (url.includes('localhost:8080')) return openaiCompatible('llamacpp', id, base);
  throw new Error(`no preset for ${url}`);
}

interface ChatFacts {
  text: string;
  reasoning: string;
  tool_calls: Array<{ id: string; name: string; input: unknown }>;
  finish_reasons: string[];
  usage: null | {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number };
    completion_tokens_details?: { reasoning_tokens?: number };
    prompt_cache_hit_tokens?: number;
  };
  errors: Array<{ error: { message: string } }>;
  models: string[];
}

const STOP: Record<string, string> = { stop: 'stop', tool_calls: 'toolUse', length: 'length' };

/** What each recorded mid-stream error must become. */
const EXPECTED_ERRORS: Record<string, { kind: string; status?: number }> = {
  // "Token limit reached" (code 400) contains an overflow phrase.
  'pydantic-ai__openrouter_stream_error.sse': { kind: 'contextOverflow', status: 400 },
  // Groq `event: error`, invalid_request_error / tool_use_failed, status_code 400.
  'pydantic-ai__groq_tool_use_failed_error_streaming.sse': { kind: 'api', status: 400 },
};

describe.skipIf(!hasFixtures)('openai-completions: every recorded stream, served over loopback in arbitrary chunks', () => {
  it.each(manifest.map((entry, i) => [entry.file, entry, i] as const))('%s', async (file, entry, i) => {
    const facts = entry.facts as unknown as ChatFacts;
    const modelId = facts.models.filter(Boolean).at(-1) ?? 'model';
    server.enqueue({ body: fixtureBody(FAMILY, file), chunking: { seed: 100 + i, maxChunk: 3 + i * 11 } });
    const stream = provider(streamRequest(modelFor(entry, modelId)), {});

    if (facts.errors.length > 0) {
      const { error, events } = await runToError(stream);
      expect(error).toMatchObject({ ...EXPECTED_ERRORS[file], provider: modelFor(entry, modelId).provider });
      expect(error.message).toContain(facts.errors[0]!.error.message.slice(0, 40));
      const thinking = events.flatMap((e) => (e.type === 'thinkingDelta' ? [e.delta] : [])).join('');
      expect(thinking).toBe(facts.reasoning);
      return;
    }

    const { message } = await runProvider(provider, streamRequest(modelFor(entry, modelId)));
    expect(textOf(message)).toBe(facts.text);
    expect(thinkingOf(message)).toBe(facts.reasoning);
    expect(callsOf(message)).toEqual(facts.tool_calls.map((c) => ({ id: c.id, name: c.name, arguments: c.input })));
    expect(message.stopReason).toBe(STOP[facts.finish_reasons.at(-1)!]);
    expect(message.model).toBe(modelId);
    expectUsage(message, facts.usage);
    if (file.includes('openrouter-anthropic')) {
      // OpenRouter relays Anthropic's signature in reasoning_details.
      const block = message.content.find((c) => c.type === 'thinking');
      expect(block?.type === 'thinking' && block.signature?.startsWith('Eq0EC')).toBe(true);
    }
  });

  /** Recorded requests whose max-tokens field differs from ours for a stated reason. */
  const FIELD_DIFFERENCES: Record<string, string> = {
    'fantasy__llama-cpp-gpt-oss__tool_streaming.sse': 'that client sent OpenAI\'s field to llama.cpp, which accepts both; our preset sends max_tokens',
    'pydantic-ai__openrouter_stream_error.sse': 'OpenRouter accepts both; our preset sends max_tokens',
  };
  const recorded = manifest.map((e) => [e.file, e, cassetteRequest(e)] as const).filter(([, , r]) => r !== undefined);

  it.each(recorded)('request body carries the essentials of the recorded request: %s', async (file, entry, cassette) => {
    const body = cassette!.body;
    const model = modelFor(entry, String(body['model']));
    const recordedMax = (body['max_tokens'] ?? body['max_completion_tokens']) as number | undefined;
    server.enqueue({ body: 'data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n' });
    const tools = recordedTools(body);
    await runProvider(
      provider,
      streamRequest(model, {
        systemPrompt: systemText(body),
        messages: [{ role: 'user', content: [{ type: 'text', text: firstUserText(body) }], timestamp: 0 }],
        tools,
        ...(recordedMax === undefined ? {} : { maxTokens: recordedMax }),
      }),
    );
    const sent = server.requests.at(-1)!;
    expect(sent.url).toBe('/v1/chat/completions');
    expect(sent.headers['authorization']).toBe(`Bearer ${TEST_KEY}`);
    const ours = sent.json();
    expect(ours['model']).toBe(body['model']);
    expect(ours['stream']).toBe(true);
    if (body['stream_options'] && model.compat?.supportsUsageInStreaming) expect(ours['stream_options']).toEqual(body['stream_options']);
    expect(((ours['tools'] ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name)).toEqual(tools.map((t) => t.name));
    expect(systemText(ours)).toBe(systemText(body));
    expect(firstUserText(ours)).toBe(firstUserText(body));
    if (recordedMax !== undefined) {
      const field = model.compat!.maxTokensField;
      expect(ours[field]).toBe(recordedMax);
      if (!FIELD_DIFFERENCES[file]) expect(body[field]).toBe(recordedMax);
    }
  });
});

function expectUsage(message: AssistantMessage, usage: ChatFacts['usage']): void {
  if (usage === null) {
    expect(message.usage.totalTokens).toBe(0);
    return;
  }
  const cached = usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens ?? 0;
  const written = usage.prompt_tokens_details?.cache_write_tokens ?? 0;
  expect(message.usage).toEqual({
    input: usage.prompt_tokens - cached - written,
    output: usage.completion_tokens,
    reasoning: usage.completion_tokens_details?.reasoning_tokens ?? 0,
    cacheRead: cached,
    cacheWrite: written,
    totalTokens: usage.total_tokens,
  });
}

// ---------------------------------------------------------------------------------------------

const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ model: 'gpt-x', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const TEXT = chunk({ role: 'assistant', content: 'Hel' }) + chunk({ content: 'lo' });
const TOOL = chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'weather', arguments: '' } }] }) +
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"loc' } }] });
const FINISH = chunk({}, 'stop') + 'data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}\n\ndata: [DONE]\n\n';

describe('openai-completions: faults end in the documented ProviderError', () => {
  const model = () => openai('gpt-4o-mini', { baseUrl: `${server.url}/v1`, apiKey: TEST_KEY });
  afterEach(async () => {
    await expectAllResponsesEnded(server);
  });

  it('429 with retry-after-ms → rateLimited with retryAfterMs', async () => {
    server.enqueue({ status: 429, headers: { 'retry-after-ms': '2500' }, body: '{"error":{"message":"Rate limit reached for gpt-4o-mini","type":"requests","code":"rate_limit_exceeded"}}' });
    const { error } = await runToError(provider(streamRequest(model()), {}));
    expect(error).toMatchObject({ kind: 'rateLimited', retryAfterMs: 2500, status: 429, provider: 'openai' });
  });

  it('500 → network, 401 → auth, 400 context_length_exceeded → contextOverflow', async () => {
    server.enqueue(
      { status: 500, body: '{"error":{"message":"The server had an error while processing your request."}}' },
      { status: 401, body: '{"error":{"message":"Incorrect API key provided: sk-test-****mnop.","code":"invalid_api_key"}}' },
      { status: 400, body: '{"error":{"message":"This model\'s maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","code":"context_length_exceeded"}}' },
    );
    expect((await runToError(provider(streamRequest(model()), {}))).error.kind).toBe('network');
    expect((await runToError(provider(streamRequest(model()), {}))).error.kind).toBe('auth');
    expect((await runToError(provider(streamRequest(model()), {}))).error.kind).toBe('contextOverflow');
  });

  it('connection reset mid-stream → network', async () => {
    server.enqueue({ body: TEXT + TOOL + FINISH, fault: { kind: 'reset', afterBytes: TEXT.length + 10 } });
    const { error, events } = await runToError(provider(streamRequest(model()), {}));
    expect(error.kind).toBe('network');
    expect(events.map((e) => e.type)).toEqual(['start', 'textDelta', 'textDelta']);
  });

  it('a malformed JSON chunk → other, naming the provider and quoting the data', async () => {
    server.enqueue({ body: `${TEXT}data: {"choices":[{"delta":{"content":"x"}\n\n${FINISH}` });
    const { error } = await runToError(provider(streamRequest(model()), {}));
    expect(error.kind).toBe('other');
    expect(error.message).toMatch(/openai sent a malformed JSON chunk.*\{"choices":\[\{"delta"/);
  });

  it('a stream that ends before any finish_reason → network; one that ends after it without [DONE] completes', async () => {
    server.enqueue({ body: TEXT + TOOL });
    const { error } = await runToError(provider(streamRequest(model()), {}));
    expect(error.kind).toBe('network');
    expect(error.message).toContain('stream ended before');
    server.enqueue({ body: TEXT + chunk({}, 'length') });
    const { message } = await runProvider(provider, streamRequest(model()));
    expect(message.stopReason).toBe('length');
    expect(textOf(message)).toBe('Hello');
  });

  it('an error chunk after content → classified; a bare JSON error line → classified too', async () => {
    server.enqueue(
      { body: `${TEXT}data: {"error":{"message":"The server is overloaded","type":"server_error"}}\n\n` },
      { body: '{"error":{"message":"Invalid API key","code":401}}\n' },
    );
    expect((await runToError(provider(streamRequest(model()), {}))).error.kind).toBe('rateLimited');
    expect((await runToError(provider(streamRequest(model()), {}))).error.kind).toBe('auth');
  });

  it('a stalled server → network after the idle timeout (virtual time)', async () => {
    const scheduler = new VirtualTimeScheduler();
    const stalling = createOpenAiCompletionsProvider({ dispatcher, idleTimeoutMs: 10_000 });
    server.enqueue({ body: TEXT + FINISH, fault: { kind: 'stall', afterBytes: TEXT.length } });
    const result = runToError(stalling(streamRequest(model()), { scheduler }));
    while (server.requests.at(-1)?.bytesSent !== TEXT.length) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 30));
    scheduler.flush();
    const { error } = await result;
    expect(error.kind).toBe('network');
    expect(error.message).toMatch(/stalled: no data for 10000 ms/);
  });

  it('unsubscribing mid tool-call arguments aborts the request; the server sees the socket close', async () => {
    const tail = Array.from({ length: 300 }, () => chunk({ tool_calls: [{ index: 0, function: { arguments: ' ' } }] })).join('');
    server.enqueue({ body: TEXT + TOOL + tail + FINISH, delayMs: 3, chunking: { maxChunk: 80 } });
    await firstValueFrom(provider(streamRequest(model()), {}).pipe(filter((e) => e.type === 'toolCallDelta')));
    const recorded = server.requests.at(-1)!;
    expect(await recorded.finished).toBe('aborted');
    await recorded.socketClosed;
  });

  it('a known backend without a key → auth error naming its variable; a local server needs none', async () => {
    const keyless = createOpenAiCompletionsProvider({ dispatcher, env: {} });
    const groq = { ...streamRequest(openaiCompatible('groq', 'llama', { baseUrl: `${server.url}/v1` })) };
    delete groq.model.apiKey;
    const { error } = await runToError(keyless(groq, {}));
    expect(error.kind).toBe('auth');
    expect(error.message).toContain('GROQ_API_KEY');

    server.enqueue({ body: TEXT + FINISH });
    const local = streamRequest(openaiCompatible('ollama', 'qwen3', { baseUrl: `${server.url}/v1` }));
    delete local.model.apiKey;
    await runProvider(keyless, local);
    expect(server.requests.at(-1)!.headers['authorization']).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------

describe('buildChatCompletionsRequest', () => {
  const assistant = (content: AssistantMessage['content'], provider = 'openai', model = 'gpt-5') => assistantMessage(content, provider, model);
  const build = (model: ModelConfig, overrides: Partial<StreamRequest> = {}) => buildChatCompletionsRequest({ ...streamRequest(model), ...overrides });

  it('follows the compat flags: max-tokens field, developer role, reasoning_effort, usage in streaming', () => {
    const gpt5 = build(openai('gpt-5'), { maxTokens: 100, thinkingLevel: 'minimal' });
    expect(gpt5.messages[0]).toEqual({ role: 'developer', content: 'You are a helpful assistant' });
    expect(gpt5.max_completion_tokens).toBe(100);
    expect(gpt5.max_tokens).toBeUndefined();
    expect(gpt5.reasoning_effort).toBe('low');
    expect(gpt5.stream_options).toEqual({ include_usage: true });
    expect(gpt5.store).toBe(false);

    const gpt4o = build(openai('gpt-4o'), { maxTokens: 100, thinkingLevel: 'high' });
    expect(gpt4o.messages[0]!.role).toBe('system');
    expect(gpt4o.max_tokens).toBe(100);
    expect(gpt4o.reasoning_effort).toBeUndefined();

    const mistral = build(openaiCompatible('mistral', 'mistral-large-latest'), { thinkingLevel: 'high' });
    expect(mistral.stream_options).toBeUndefined();
    expect(mistral.reasoning_effort).toBeUndefined();

    const router = build(openaiCompatible('openrouter', 'anthropic/claude-haiku-4.5'), { thinkingLevel: 'medium' });
    expect(router.reasoning).toEqual({ effort: 'medium' });
  });

  it('sends tools as functions, images as data URLs, tool results as tool messages (images in a following user message)', () => {
    const body = build(openai('gpt-4o'), {
      tools: [weatherTool],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image', data: 'QUJD', mimeType: 'image/jpeg' }], timestamp: 0 },
        assistant([{ type: 'text', text: 'calling' }, { type: 'toolCall', id: 'call_1', name: 'weather', arguments: { location: 'Oslo' } }], 'openai', 'gpt-4o'),
        { role: 'toolResult', toolCallId: 'call_1', toolName: 'weather', content: [{ type: 'text', text: 'snow' }, { type: 'image', data: 'WFla', mimeType: 'image/png' }], isError: false, timestamp: 0 },
      ],
    });
    expect(body.tools).toEqual([{ type: 'function', function: { name: 'weather', description: weatherTool.description, parameters: weatherTool.parameters } }]);
    expect(body.messages[1]).toEqual({ role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,QUJD' } }] });
    expect(body.messages[2]).toEqual({
      role: 'assistant',
      content: 'calling',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"location":"Oslo"}' } }],
    });
    expect(body.messages[3]).toEqual({ role: 'tool', tool_call_id: 'call_1', content: 'snow' });
    expect(body.messages[4]).toMatchObject({ role: 'user', content: [{ type: 'text' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,WFla' } }] });
  });

  it('turns foreign thinking into text, drops own thinking, echoes OpenRouter signatures', () => {
    const foreign = build(openai('gpt-5'), {
      messages: [user('q'), assistant([{ type: 'thinking', thinking: 'deep', signature: 's' }, { type: 'text', text: 'a' }], 'anthropic', 'claude'), user('r')],
    });
    expect(foreign.messages[2]).toEqual({ role: 'assistant', content: '<thinking>\ndeep\n</thinking>\n\na' });
    const own = build(openai('gpt-5'), { messages: [user('q'), assistant([{ type: 'thinking', thinking: 'mine' }, { type: 'text', text: 'a' }]), user('r')] });
    expect(own.messages[2]).toEqual({ role: 'assistant', content: 'a' });
    const router = build(openaiCompatible('openrouter', 'x'), {
      messages: [user('q'), assistant([{ type: 'thinking', thinking: 't', signature: 'sig' }, { type: 'text', text: 'a' }], 'openrouter', 'x'), user('r')],
    });
    expect(router.messages[2]).toMatchObject({ reasoning_details: [{ type: 'reasoning.text', text: 't', signature: 'sig' }] });
  });

  it('gives Mistral 9-character alphanumeric tool ids, the same for call and result', () => {
    const body = build(openaiCompatible('mistral', 'mistral-large-latest'), {
      messages: [
        user('q'),
        assistant([{ type: 'toolCall', id: 'toolu_01N2eM4V43kGCDkq2Lw7ChWQ', name: 'weather', arguments: {} }], 'anthropic', 'claude'),
        { role: 'toolResult', toolCallId: 'toolu_01N2eM4V43kGCDkq2Lw7ChWQ', toolName: 'weather', content: [{ type: 'text', text: 'ok' }], isError: false, timestamp: 0 },
      ],
    });
    const id = (body.messages[2] as { tool_calls: Array<{ id: string }> }).tool_calls[0]!.id;
    expect(id).toMatch(/^[a-zA-Z0-9]{9}$/);
    expect(body.messages[3]).toMatchObject({ role: 'tool', tool_call_id: id });
    expect(mistralToolId('abc123XYZ')).toBe('abc123XYZ');
  });

  it('shortens a foreign tool id over OpenAI\'s 40 characters, the same for call and result; shorter ids pass unchanged', () => {
    const long = `toolu_${'x'.repeat(30)}|fc_${'y'.repeat(30)}`;
    const body = build(openai('gpt-4o'), {
      messages: [
        user('q'),
        assistant([{ type: 'toolCall', id: long, name: 'weather', arguments: {} }, { type: 'toolCall', id: 'toolu_01N2eM4V43kGCDkq2Lw7ChWQ', name: 'weather', arguments: {} }], 'anthropic', 'claude'),
        { role: 'toolResult', toolCallId: long, toolName: 'weather', content: [{ type: 'text', text: 'ok' }], isError: false, timestamp: 0 },
        { role: 'toolResult', toolCallId: 'toolu_01N2eM4V43kGCDkq2Lw7ChWQ', toolName: 'weather', content: [{ type: 'text', text: 'ok' }], isError: false, timestamp: 0 },
      ],
    });
    const ids = (body.messages[2] as { tool_calls: Array<{ id: string }> }).tool_calls.map((c) => c.id);
    expect(ids[0]!.length).toBeLessThanOrEqual(40);
    expect(ids[0]!.startsWith(long.slice(0, 32))).toBe(true);
    expect(ids[1]).toBe('toolu_01N2eM4V43kGCDkq2Lw7ChWQ');
    expect(body.messages[3]).toMatchObject({ role: 'tool', tool_call_id: ids[0] });
    expect(body.messages[4]).toMatchObject({ role: 'tool', tool_call_id: ids[1] });
    expect(openAiToolId(`${long}z`)).not.toBe(ids[0]); // the hash covers the whole id
  });
});
