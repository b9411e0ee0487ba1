import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { buildGoogleBody, createGoogleProvider, googleProvider } from '../../src/providers/google.js';
import type { GoogleContent } from '../../src/providers/google.js';
import type { ModelConfig } from '../../src/types/provider.js';
import type { Message } from '../../src/types/message.js';
import { fixtureBody, fixturesAvailable, loadManifest, readCassette } from './fixture-server.js';
import {
  assistantMessage,
  expectMatchesGoogleFacts,
  request,
  run,
  runToError,
  toolCallsOf,
  toolResult,
  useFixtureServer,
  user,
  weatherTool,
} from './harness.js';

const KEY = 'AIza-test-google-key-0123456789';
const FAMILY = 'google';

const model = (baseUrl: string, id = 'gemini-test'): ModelConfig => ({ id, api: 'google-generative-ai', provider: 'google', baseUrl, apiKey: KEY });

const server = await useFixtureServer();

const present = fixturesAvailable(FAMILY);
const entries = present ? loadManifest(FAMILY) : [];

describe.skipIf(!present)('Gemini fixtures', () => {
  entries.forEach((entry, i) => {
    it(`parses ${entry.file} served over a real socket in odd-sized chunks`, async () => {
      server.enqueue({ body: fixtureBody(FAMILY, entry.file), chunking: { seed: i + 3, maxChunk: 41 } });
      const { message } = await run(googleProvider, request(model(server.url)));
      expectMatchesGoogleFacts(message, entry, 'google-fc-');
      const sent = server.requests.at(-1)!;
      expect(sent.url).toBe('/v1beta/models/gemini-test:streamGenerateContent?alt=sse');
      expect(sent.headers['x-goog-api-key']).toBe(KEY);
      expect(sent.url).not.toContain(KEY);
    });
  });
});

type Cassette = { interactions: Array<{ request: { body: string } }> };
const cassetteBody = (path: string, interaction: number): { contents: GoogleContent[] } & Record<string, unknown> =>
  JSON.parse((parseYaml(readCassette(path)!) as Cassette).interactions[interaction]!.request.body) as { contents: GoogleContent[] };

/** Essential fields of contents: roles, texts, call names/args, signatures, response names and results. */
const essentials = (contents: GoogleContent[], keepIds: boolean) =>
  contents.map((c) => ({
    role: c.role,
    parts: c.parts.map((p) => {
      if ('functionCall' in p) return { call: p.functionCall.name, args: p.functionCall.args, id: keepIds ? p.functionCall.id : undefined, sig: p.thoughtSignature };
      if ('functionResponse' in p) return { response: p.functionResponse.name, result: p.functionResponse.response, id: keepIds ? p.functionResponse.id : undefined };
      if ('text' in p) return { text: p.text };
      return p;
    }),
  }));

describe.skipIf(!present)('Gemini request body', () => {
  const recordedSecondTurn = async (fixture: string, cassette: string, id: string, tools: (calls: ReturnType<typeof toolCallsOf>) => Message[], keepIds: boolean) => {
    server.enqueue({ body: fixtureBody(FAMILY, fixture) });
    const first = await run(googleProvider, request(model(server.url, id)));
    const recorded = cassetteBody(cassette, 1);
    const firstUser = recorded.contents[0]!.parts.map((p) => ('text' in p ? p.text : '')).join('');
    const ours = buildGoogleBody(request(model('http://x', id), { messages: [user(firstUser), first.message, ...tools(toolCallsOf(first.message))] }));
    expect(essentials(ours.contents, keepIds)).toEqual(essentials(recorded.contents, keepIds));
  };

  it('replays Gemini 3 calls with their ids and thought signature like the recorded second turn', async () => {
    await recordedSecondTurn(
      'fantasy__gemini-3-pro-preview__multi_tool_streaming.sse',
      'charmbracelet__fantasy/providertests/testdata/TestGoogleCommon/gemini-3-pro-preview/multi_tool_streaming.yaml',
      'gemini-3-pro-preview',
      ([add, multiply]) => [toolResult(add!, '5'), toolResult(multiply!, '6')],
      true,
    );
  });

  it('replays a thought signature from a thinking turn on its function call, not the thought text', async () => {
    await recordedSecondTurn(
      'fantasy__gemini-2.5-flash__thinking_tool_streaming.sse',
      'charmbracelet__fantasy/providertests/testdata/TestGoogleThinking/gemini-2.5-flash/thinking-streaming.yaml',
      'gemini-2.5-flash',
      ([call]) => [toolResult(call!, '40 C')],
      // The recording's client invented id "1"; ours invents google-fc-0 and keeps it to itself.
      false,
    );
  });

  it('carries the essential first-turn fields of a recorded thinking request', () => {
    const recorded = cassetteBody('charmbracelet__fantasy/providertests/testdata/TestGoogleThinking/gemini-2.5-flash/thinking-streaming.yaml', 0);
    const ours = buildGoogleBody(
      request(model('http://x'), { messages: [user("What's the weather in Florence, Italy?")], tools: [weatherTool], thinkingLevel: 'minimal' }),
    ) as unknown as Record<string, unknown>;
    expect(ours['contents']).toEqual(recorded.contents);
    expect(ours['toolConfig']).toEqual(recorded['toolConfig']);
    expect(ours['generationConfig']).toEqual(recorded['generationConfig']); // includeThoughts, budget 128
    expect((ours['systemInstruction'] as { parts: unknown }).parts).toEqual((recorded['systemInstruction'] as { parts: unknown }).parts);
    const decl = (ours['tools'] as Array<{ functionDeclarations: Array<Record<string, unknown>> }>)[0]!.functionDeclarations[0]!;
    const recordedDecl = (recorded['tools'] as Array<{ functionDeclarations: Array<Record<string, unknown>> }>)[0]!.functionDeclarations[0]!;
    expect([decl['name'], decl['description']]).toEqual([recordedDecl['name'], recordedDecl['description']]);
    expect(decl['parametersJsonSchema']).toEqual(weatherTool.parameters);
  });

  it('sends temperature and the system instruction like the recorded pydantic-ai request', () => {
    const cassette = readCassette('pydantic__pydantic-ai/tests/models/cassettes/test_google/test_google_model_stream.yaml')!;
    const recorded = (parseYaml(cassette) as { interactions: Array<{ request: { parsed_body: Record<string, unknown> } }> }).interactions[0]!.request.parsed_body;
    const ours = buildGoogleBody(request(model('http://x'), { systemPrompt: 'You are a helpful chatbot.', messages: [user('What is the capital of France?')], temperature: 0 }));
    expect(ours.contents).toEqual(recorded['contents']);
    expect(ours.generationConfig).toEqual(recorded['generationConfig']);
    expect(ours.systemInstruction!.parts).toEqual((recorded['systemInstruction'] as { parts: unknown }).parts);
  });

  it('maps images, errors in tool results, foreign thinking and merges parallel tool results', () => {
    const foreign = assistantMessage(
      [
        { type: 'thinking', thinking: 'Plan: call the tool.', signature: 'sig-from-anthropic' },
        { type: 'toolCall', id: 'toolu_1', name: 'weather', arguments: { location: 'Rome' } },
        { type: 'toolCall', id: 'toolu_2', name: 'weather', arguments: { location: 'Oslo' } },
      ],
      'anthropic',
      'claude',
    );
    const calls = toolCallsOf(foreign);
    const body = buildGoogleBody(
      request(model('http://x'), {
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }], timestamp: 0 },
          foreign,
          toolResult(calls[0]!, '21 C'),
          toolResult(calls[1]!, 'no such city', true),
        ],
      }),
    );
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'see' }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }] },
      {
        role: 'model',
        parts: [
          { text: '<thinking>\nPlan: call the tool.\n</thinking>' },
          { functionCall: { name: 'weather', args: { location: 'Rome' }, id: 'toolu_1' } },
          { functionCall: { name: 'weather', args: { location: 'Oslo' }, id: 'toolu_2' } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'weather', response: { result: '21 C' }, id: 'toolu_1' } },
          { functionResponse: { name: 'weather', response: { error: 'no such city' }, id: 'toolu_2' } },
        ],
      },
    ]);
    expect(body.generationConfig.thinkingConfig).toBeUndefined();
    expect(buildGoogleBody(request(model('http://x'), { thinkingLevel: 'high' })).generationConfig.thinkingConfig).toEqual({
      includeThoughts: true,
      thinkingBudget: 8192,
    });
  });
});

describe('Gemini faults', () => {
  const chunk = (o: object) => `data: ${JSON.stringify(o)}\r\n\r\n`;
  const textChunk = (text: string, finishReason?: string) =>
    chunk({ candidates: [{ content: { parts: [{ text }], role: 'model' }, ...(finishReason ? { finishReason } : {}) }], modelVersion: 'gemini-test' });

  it('a stream that ends without a finishReason fails with a retryable network error', async () => {
    server.enqueue({ body: textChunk('Hel') });
    const { error } = await runToError(googleProvider(request(model(server.url)), {}));
    expect(error.kind).toBe('network');
    expect(error.message).toMatch(/ended before a chunk with finishReason/);
  });

  it('a malformed chunk fails with ProviderError other naming the provider', async () => {
    server.enqueue({ body: `${textChunk('Hi')}data: {"candidates": [\r\n\r\n` });
    const { error } = await runToError(googleProvider(request(model(server.url)), {}));
    expect(error.kind).toBe('other');
    expect(error.provider).toBe('google');
    expect(error.message).toContain('{"candidates": [');
  });

  it('a mid-stream error chunk is classified (RESOURCE_EXHAUSTED 429 -> rateLimited)', async () => {
    server.enqueue({ body: textChunk('Hi') + chunk({ error: { code: 429, message: 'Resource has been exhausted', status: 'RESOURCE_EXHAUSTED' } }) });
    const { error } = await runToError(googleProvider(request(model(server.url)), {}));
    expect(error.kind).toBe('rateLimited');
  });

  it('HTTP 400 with a token-limit message is contextOverflow; 403 is auth without the key', async () => {
    server.enqueue(
      { status: 400, body: JSON.stringify([{ error: { code: 400, message: 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).', status: 'INVALID_ARGUMENT' } }]) },
      { status: 403, body: JSON.stringify({ error: { code: 403, message: `API key ${KEY} not valid`, status: 'PERMISSION_DENIED' } }) },
    );
    expect((await runToError(googleProvider(request(model(server.url)), {}))).error.kind).toBe('contextOverflow');
    const { error: auth } = await runToError(googleProvider(request(model(server.url)), {}));
    expect(auth.kind).toBe('auth');
    expect(auth.message).not.toContain(KEY);
  });

  it('MAX_TOKENS stops with length; SAFETY ends as an error message naming the reason', async () => {
    server.enqueue({ body: textChunk('Once upon', 'MAX_TOKENS') }, { body: textChunk('', 'SAFETY') });
    expect((await run(googleProvider, request(model(server.url)))).message.stopReason).toBe('length');
    const blocked = (await run(googleProvider, request(model(server.url)))).message;
    expect(blocked.stopReason).toBe('error');
    expect(blocked.errorMessage).toMatch(/SAFETY/);
  });

  it('a stalled server trips the idle timeout; unsubscribing mid-stream closes the socket', async () => {
    server.enqueue({ body: textChunk('Hi'), fault: { kind: 'stall', afterBytes: 10_000 } });
    const { error } = await runToError(createGoogleProvider({ idleTimeoutMs: 150 })(request(model(server.url)), {}));
    expect(error.kind).toBe('network');
    server.enqueue({ body: textChunk('Hi'), fault: { kind: 'stall', afterBytes: 10_000 } });
    const seen: string[] = [];
    const subscription = googleProvider(request(model(server.url)), {}).subscribe((e) => seen.push(e.type));
    while (!seen.includes('textDelta')) await new Promise((r) => setTimeout(r, 5));
    subscription.unsubscribe();
    await server.requests.at(-1)!.socketClosed;
  });
});
