import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from '@aws-crypto/sha256-js';
import { bedrockProvider, bedrockStreamUrl, buildBedrockBody, createBedrockProvider } from '../../src/providers/bedrock.js';
import type { ModelConfig } from '../../src/types/provider.js';
import type { AssistantMessage } from '../../src/types/message.js';
import { fixturesAvailable, loadManifest, readCassette, readFixtureBytes } from './fixture-server.js';
import type { ManifestEntry } from './fixture-server.js';
import { skipGroup } from '../support/skip.js';
import {
  assistantMessage,
  callsOf,
  request,
  run,
  runToError,
  textOf,
  thinkingOf,
  toolCallsOf,
  toolResult,
  useFixtureServer,
  user,
  weatherTool,
} from './harness.js';

const TOKEN = 'bedrock-api-key-test-0123456789';
const FAMILY = 'bedrock';
const EVENTSTREAM = { 'content-type': 'application/vnd.amazon.eventstream' };

interface BedrockFacts {
  text: string;
  reasoning: string;
  reasoning_signature: boolean;
  redacted_reasoning_deltas: number;
  tool_calls: Array<{ toolUseId: string; name: string; type: string | null; parsed_input: Record<string, unknown> }>;
  stop_reason: string;
  usage: { inputTokens: number; outputTokens: number; totalTokens: number; cacheReadInputTokens?: number; cacheWriteInputTokens?: number };
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** One ConverseStream event as an event-stream frame, the way Bedrock sends it. */
function frame(eventType: string, payload: object, messageType = 'event'): Uint8Array {
  const typeHeader = messageType === 'exception' ? ':exception-type' : ':event-type';
  return codec.encode({
    headers: {
      [typeHeader]: { type: 'string', value: eventType },
      ':message-type': { type: 'string', value: messageType },
      ':content-type': { type: 'string', value: 'application/json' },
    },
    body: fromUtf8(JSON.stringify(payload)),
  });
}

const concat = (frames: Uint8Array[]): Uint8Array => Buffer.concat(frames);

/** The bytes to serve: recorded event streams as they are; JSON-lines fixtures encoded into frames. */
function servedBytes(entry: ManifestEntry): Uint8Array {
  const bytes = readFixtureBytes(FAMILY, entry.file);
  if (!entry.file.endsWith('.chunks.txt')) return bytes;
  const lines = bytes.toString('utf8').split('\n').filter((l) => l.trim() !== '');
  return concat(
    lines.map((line) => {
      const event = JSON.parse(line) as Record<string, object>;
      const [type, payload] = Object.entries(event)[0]!;
      return frame(type, payload);
    }),
  );
}

const model = (baseUrl: string, overrides: Partial<ModelConfig> = {}): ModelConfig => ({
  id: 'us.amazon.nova-micro-v1:0',
  api: 'bedrock-converse-stream',
  provider: 'bedrock',
  baseUrl,
  region: 'us-east-1',
  apiKey: TOKEN,
  ...overrides,
});

function expectMatchesFacts(message: AssistantMessage, facts: BedrockFacts): void {
  expect(textOf(message)).toBe(facts.text);
  expect(thinkingOf(message)).toBe(facts.reasoning);
  const thinking = message.content.filter((c) => c.type === 'thinking');
  expect(thinking.some((c) => c.type === 'thinking' && !c.redacted && !!c.signature)).toBe(facts.reasoning_signature);
  expect(thinking.filter((c) => c.type === 'thinking' && c.redacted && !!c.signature)).toHaveLength(facts.redacted_reasoning_deltas);
  // Server-side tools (type server_tool_use) ran at AWS: they are not calls for the loop.
  const clientCalls = facts.tool_calls.filter((c) => c.type !== 'server_tool_use');
  expect(callsOf(message)).toEqual(
    clientCalls.map((c) => ({ id: c.toolUseId, name: c.name, arguments: c.parsed_input })),
  );
  expect(message.stopReason).toBe({ end_turn: 'stop', tool_use: 'toolUse' }[facts.stop_reason]);
  expect(message.usage).toEqual({
    input: facts.usage.inputTokens,
    output: facts.usage.outputTokens,
    reasoning: 0,
    cacheRead: facts.usage.cacheReadInputTokens ?? 0,
    cacheWrite: facts.usage.cacheWriteInputTokens ?? 0,
    totalTokens: facts.usage.totalTokens,
  });
}

const server = await useFixtureServer();

const present = fixturesAvailable(FAMILY);
const entries = present ? loadManifest(FAMILY) : [];

describe.skipIf(!present)('Bedrock ConverseStream fixtures', () => {
  entries.forEach((entry, i) => {
    if (entry.file.endsWith('.invoke-eventstream')) {
      // InvokeModelWithResponseStream (Anthropic Messages wrapped in base64 `chunk` events) is another API.
      it.skip(`${entry.file}: InvokeModelWithResponseStream, not ConverseStream; not implemented`, () => {});
      skipGroup(`bedrock fixture ${entry.file}`, 'InvokeModelWithResponseStream, not the ConverseStream protocol phi-rx implements');
      return;
    }
    it(`parses ${entry.file} as binary frames split at arbitrary byte boundaries`, async () => {
      server.enqueue({ body: servedBytes(entry), headers: EVENTSTREAM, chunking: { seed: 5 + i, maxChunk: 97 } });
      const { message } = await run(bedrockProvider, request(model(server.url)));
      expectMatchesFacts(message, entry.facts as unknown as BedrockFacts);
      const sent = server.requests.at(-1)!;
      expect(sent.url).toBe('/model/us.amazon.nova-micro-v1%3A0/converse-stream');
      expect(sent.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(sent.headers.accept).toBe('application/vnd.amazon.eventstream');
    });
  });
});

type Cassette = { interactions: Array<{ request: { body: string } }> };
const cassetteRequest = (path: string, interaction: number): Record<string, unknown> =>
  JSON.parse((parseYaml(readCassette(path)!) as Cassette).interactions[interaction]!.request.body) as Record<string, unknown>;

describe.skipIf(!present)('Bedrock request body', () => {
  it('replays the Nova tool turn like the recorded second request (text, toolUse, toolResult)', async () => {
    server.enqueue({ body: readFixtureBytes(FAMILY, 'pydantic-ai__bedrock_model_iter_stream.0.nova-micro-tool.eventstream'), headers: EVENTSTREAM });
    const first = await run(bedrockProvider, request(model(server.url)));
    const recorded = cassetteRequest('pydantic__pydantic-ai/tests/models/cassettes/test_bedrock/test_bedrock_model_iter_stream.yaml', 1);
    const body = buildBedrockBody(
      request(model('http://x'), {
        systemPrompt: 'You are a helpful chatbot.',
        messages: [user('What is the temperature of the capital of France?'), first.message, toolResult(toolCallsOf(first.message)[0]!, '30°C')],
        cacheConfig: { enabled: false, strategy: { kind: 'disabled' } },
      }),
    );
    expect(body.messages).toEqual(recorded['messages']);
    expect(body.system).toEqual(recorded['system']);
  });

  it('sends system and temperature like the recorded plain request', () => {
    const recorded = cassetteRequest('pydantic__pydantic-ai/tests/models/cassettes/test_bedrock/test_bedrock_model_stream.yaml', 0);
    const body = buildBedrockBody(
      request(model('http://x'), { systemPrompt: 'You are a helpful chatbot.', messages: [user('What is the capital of France?')], temperature: 0, cacheConfig: { enabled: false, strategy: { kind: 'auto' } } }),
    );
    expect(body).toEqual(recorded);
  });

  it('sends Claude thinking as additionalModelRequestFields like the recorded thinking request', () => {
    const recorded = cassetteRequest('pydantic__pydantic-ai/tests/models/cassettes/test_bedrock/test_bedrock_model_thinking_part_stream.yaml', 0);
    const body = buildBedrockBody(
      request(model('http://x', { id: 'us.anthropic.claude-sonnet-4-20250514-v1:0' }), {
        systemPrompt: '',
        messages: [user('Hello')],
        thinkingLevel: 'low',
        cacheConfig: { enabled: false, strategy: { kind: 'auto' } },
      }),
    );
    expect(body.additionalModelRequestFields).toEqual(recorded['additionalModelRequestFields']);
    expect(body.messages).toEqual(recorded['messages']);
    expect(body.inferenceConfig.maxTokens).toBeGreaterThan(1024);
  });

  it('carries tools as toolSpec and echoes Claude reasoning with its signature (and redacted reasoning as is)', async () => {
    server.enqueue({ body: readFixtureBytes(FAMILY, 'pydantic-ai__bedrock_thinking_part_stream.claude-sonnet-4.eventstream'), headers: EVENTSTREAM });
    const claude = model(server.url, { id: 'us.anthropic.claude-sonnet-4-20250514-v1:0' });
    const first = await run(bedrockProvider, request(claude));
    const thinking = first.message.content[0]!;
    const body = buildBedrockBody(request(claude, { messages: [user('Hello'), first.message, user('Again')], tools: [weatherTool], cacheConfig: { enabled: false, strategy: { kind: 'auto' } } }));
    expect(body.toolConfig!.tools).toEqual([{ toolSpec: { name: 'weather', description: weatherTool.description, inputSchema: { json: weatherTool.parameters } } }]);
    expect(body.messages[1]!.content[0]).toEqual({
      reasoningContent: { reasoningText: { text: thinkingOf(first.message), signature: (thinking as { signature: string }).signature } },
    });
    server.enqueue({ body: readFixtureBytes(FAMILY, 'pydantic-ai__bedrock_thinking_part_redacted_stream.claude-3-7.eventstream'), headers: EVENTSTREAM });
    const redacted = await run(bedrockProvider, request(claude));
    const replay = buildBedrockBody(request(claude, { messages: [user('x'), redacted.message, user('y')] }));
    expect(replay.messages[1]!.content.slice(0, 2).map((b) => Object.keys((b as { reasoningContent: object }).reasoningContent))).toEqual([
      ['redactedContent'],
      ['redactedContent'],
    ]);
  });

  it('places cache points on system, tools and the last user turn for Claude and Nova, never for others', () => {
    const req = request(model('http://x'), { tools: [weatherTool] });
    const body = buildBedrockBody(req);
    expect(body.system!.at(-1)).toEqual({ cachePoint: { type: 'default' } });
    expect(body.toolConfig!.tools.at(-1)).toEqual({ cachePoint: { type: 'default' } });
    expect(body.messages.at(-1)!.content.at(-1)).toEqual({ cachePoint: { type: 'default' } });
    const other = buildBedrockBody(request(model('http://x', { id: 'openai.gpt-oss-120b-1:0' }), { tools: [weatherTool] }));
    expect(JSON.stringify(other)).not.toContain('cachePoint');
    const manual = buildBedrockBody({ ...req, cacheConfig: { enabled: true, strategy: { kind: 'manual', cacheSystem: true, cacheTools: false, cacheMessages: false } } });
    expect(JSON.stringify(manual.toolConfig)).not.toContain('cachePoint');
    expect(manual.system!.at(-1)).toEqual({ cachePoint: { type: 'default' } });
  });

  it('turns foreign thinking into text, images into image blocks and error results into status error', () => {
    const foreign = assistantMessage(
      [
        { type: 'thinking', thinking: 'Hmm.', signature: 'openai-sig' },
        { type: 'toolCall', id: 'call_1', name: 'weather', arguments: { location: 'Rome' } },
      ],
      'openai',
      'gpt',
    );
    const body = buildBedrockBody(
      request(model('http://x', { id: 'meta.llama3' }), {
        messages: [
          { role: 'user', content: [{ type: 'image', data: 'AAAA', mimeType: 'image/jpeg' }], timestamp: 0 },
          foreign,
          toolResult(toolCallsOf(foreign)[0]!, 'boom', true),
        ],
      }),
    );
    expect(body.messages).toEqual([
      { role: 'user', content: [{ image: { format: 'jpeg', source: { bytes: 'AAAA' } } }] },
      { role: 'assistant', content: [{ text: '<thinking>\nHmm.\n</thinking>' }, { toolUse: { toolUseId: 'call_1', name: 'weather', input: { location: 'Rome' } } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'call_1', content: [{ text: 'boom' }], status: 'error' } }] },
    ]);
  });
});

describe('Bedrock auth', () => {
  const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'session-token-0123456789' };
  const ok = () => concat([frame('messageStart', { role: 'assistant' }), frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hi' } }), frame('messageStop', { stopReason: 'end_turn' })]);

  it('signs with SigV4 when there is no bearer key; the signature verifies against what the server received', async () => {
    server.enqueue({ body: ok(), headers: EVENTSTREAM });
    const provider = createBedrockProvider({ credentials: async () => credentials, env: {} });
    const { apiKey: _key, ...unkeyed } = model(server.url);
    await run(provider, request(unkeyed as ModelConfig));
    const sent = server.requests.at(-1)!;
    const auth = String(sent.headers.authorization);
    expect(auth).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/bedrock\/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$/);
    expect(sent.headers['x-amz-security-token']).toBe(credentials.sessionToken);
    // Re-sign exactly what arrived (method, host, path, body, date): the signatures must agree.
    const url = new URL(sent.url, server.url);
    const signedNames = /SignedHeaders=([^,]+)/.exec(auth)![1]!.split(';');
    const headers: Record<string, string> = {};
    for (const name of signedNames) headers[name] = String(sent.headers[name]);
    const amzDate = String(sent.headers['x-amz-date']);
    const signingDate = new Date(`${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`);
    const resigned = await new SignatureV4({ credentials, region: 'us-east-1', service: 'bedrock', sha256: Sha256 }).sign(
      { method: sent.method, protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: url.pathname, query: {}, headers, body: sent.body },
      { signingDate },
    );
    expect((resigned.headers as Record<string, string>)['authorization']).toBe(auth);
  });

  it('without any credentials fails with an auth error saying what to set, before sending anything', async () => {
    const requestsBefore = server.requests.length;
    const { apiKey: _key, ...unkeyed } = model(server.url);
    const { error } = await runToError(createBedrockProvider({ env: {} })(request(unkeyed as ModelConfig), {}));
    expect(error.kind).toBe('auth');
    expect(error.message).toMatch(/AWS_BEARER_TOKEN_BEDROCK/);
    expect(server.requests.length).toBe(requestsBefore);
  });

  it('builds the regional endpoint with the model id escaped', () => {
    const { baseUrl: _b, region: _r, ...noBase } = model('http://x');
    expect(bedrockStreamUrl(noBase as ModelConfig, { AWS_REGION: 'eu-west-3' })).toBe('https://bedrock-runtime.eu-west-3.amazonaws.com/model/us.amazon.nova-micro-v1%3A0/converse-stream');
  });
});

describe('Bedrock faults', () => {
  const start = frame('messageStart', { role: 'assistant' });
  const text = frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hel' } });

  it('a throttlingException frame is rateLimited; a validationException about length is contextOverflow', async () => {
    server.enqueue(
      { body: concat([start, text, frame('throttlingException', { message: 'Too many requests, please wait before trying again.' }, 'exception')]), headers: EVENTSTREAM },
      { body: concat([frame('validationException', { message: 'Input is too long for requested model.' }, 'exception')]), headers: EVENTSTREAM },
    );
    const { error: throttled } = await runToError(bedrockProvider(request(model(server.url)), {}));
    expect(throttled.kind).toBe('rateLimited');
    expect(throttled.message).toContain('Too many requests');
    expect((await runToError(bedrockProvider(request(model(server.url)), {}))).error.kind).toBe('contextOverflow');
  });

  it('a body cut inside a frame, and a stream without messageStop, fail with retryable network errors', async () => {
    const whole = concat([start, text]);
    server.enqueue({ body: whole.subarray(0, whole.length - 7), headers: EVENTSTREAM }, { body: whole, headers: EVENTSTREAM });
    const { error: cut } = await runToError(bedrockProvider(request(model(server.url)), {}));
    expect(cut.kind).toBe('network');
    expect(cut.message).toMatch(/inside an event-stream frame/);
    const { error: early } = await runToError(bedrockProvider(request(model(server.url)), {}));
    expect(early.kind).toBe('network');
    expect(early.message).toMatch(/ended before messageStop/);
  });

  it('a frame with a bad checksum or malformed JSON payload fails with ProviderError other', async () => {
    const corrupt = concat([start, text]);
    corrupt[corrupt.length - 20] ^= 0xff;
    const badJson = codec.encode({
      headers: { ':event-type': { type: 'string', value: 'contentBlockDelta' }, ':message-type': { type: 'string', value: 'event' } },
      body: fromUtf8('{"contentBlockIndex":0,"delta":{"te'),
    });
    server.enqueue({ body: corrupt, headers: EVENTSTREAM }, { body: concat([start, badJson]), headers: EVENTSTREAM });
    const { error: crc } = await runToError(bedrockProvider(request(model(server.url)), {}));
    expect(crc.kind).toBe('other');
    expect(crc.message).toMatch(/corrupt event-stream frame/);
    const { error: json } = await runToError(bedrockProvider(request(model(server.url)), {}));
    expect(json.kind).toBe('other');
    expect(json.provider).toBe('bedrock');
    expect(json.message).toContain('"delta":{"te');
  });

  it('HTTP 403 is auth and never shows the key; guardrail and max_tokens stops map to guardRail and length', async () => {
    server.enqueue(
      { status: 403, body: JSON.stringify({ message: `The security token ${TOKEN} is invalid.` }) },
      { body: concat([start, text, frame('messageStop', { stopReason: 'guardrail_intervened' })]), headers: EVENTSTREAM },
      { body: concat([start, text, frame('messageStop', { stopReason: 'max_tokens' })]), headers: EVENTSTREAM },
    );
    const { error: auth } = await runToError(bedrockProvider(request(model(server.url)), {}));
    expect(auth.kind).toBe('auth');
    expect(auth.message).not.toContain(TOKEN);
    expect((await run(bedrockProvider, request(model(server.url)))).message.stopReason).toBe('guardRail');
    expect((await run(bedrockProvider, request(model(server.url)))).message.stopReason).toBe('length');
  });

  it('unsubscribing mid tool-call input aborts the request and closes the socket', async () => {
    const toolStart = frame('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: 't1', name: 'weather' } } });
    const toolDelta = frame('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: '{"loc' } } });
    server.enqueue({ body: concat([start, toolStart, toolDelta]), headers: EVENTSTREAM, fault: { kind: 'stall', afterBytes: 100_000 } });
    const seen: string[] = [];
    const subscription = bedrockProvider(request(model(server.url)), {}).subscribe((e) => seen.push(e.type));
    while (!seen.includes('toolCallDelta')) await new Promise((r) => setTimeout(r, 5));
    subscription.unsubscribe();
    await server.requests.at(-1)!.socketClosed;
    expect(seen).toEqual(['start', 'toolCallStart', 'toolCallDelta']);
  });
});
