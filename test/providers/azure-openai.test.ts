import { afterEach, describe, expect, it } from 'vitest';
import { azureUrl, createAzureOpenAiProvider } from '../../src/providers/azure-openai.js';
import { AZURE_OPENAI_DEFAULT_API_VERSION, azureOpenai } from '../../src/providers/models.js';
import type { ModelConfig } from '../../src/types/provider.js';
import type { AssistantMessage } from '../../src/types/message.js';
import { textOf } from '../../src/types/message.js';
import { expectAllResponsesEnded, fixtureBody, fixturesAvailable, loadManifest } from './fixture-server.js';
import type { ManifestEntry } from './fixture-server.js';
import {
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
  toolCallsOf,
  useLoopbackProvider,
} from './harness.js';

const FAMILY = 'azure-openai';
const hasFixtures = fixturesAvailable(FAMILY);
const manifest: ManifestEntry[] = hasFixtures ? loadManifest(FAMILY) : [];

const { server, provider } = await useLoopbackProvider((http) => createAzureOpenAiProvider({ ...http, env: {} }));

const isResponses = (file: string) => file.includes('responses');
/** The v1 endpoint the recordings were made against, on the loopback server. */
const modelFor = (file: string, deployment: string): ModelConfig =>
  azureOpenai(deployment, { baseUrl: `${server.url}/openai/v1`, apiKey: TEST_KEY, wire: isResponses(file) ? 'responses' : 'chat' });

interface ChatFacts {
  text: string;
  reasoning: string;
  tool_calls: Array<{ id: string; name: string; input: unknown }>;
  finish_reasons: string[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number; prompt_tokens_details: { cached_tokens: number }; completion_tokens_details: { reasoning_tokens: number } };
  models: string[];
}
interface ResponsesFacts {
  text: string;
  reasoning_summary: string;
  function_calls: Array<{ call_id: string; name: string; input: unknown }>;
  status: string;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number; input_tokens_details: { cached_tokens: number }; output_tokens_details: { reasoning_tokens: number } };
  model: string;
}

describe.skipIf(!hasFixtures)('azure-openai: every recorded stream, served over loopback in arbitrary chunks', () => {
  it.each(manifest.map((entry, i) => [entry.file, entry, i] as const))('%s', async (file, entry, i) => {
    if (isResponses(file)) {
      const facts = entry.facts as unknown as ResponsesFacts;
      server.enqueue({ body: fixtureBody(FAMILY, file), chunking: { seed: 300 + i, maxChunk: 9 + i * 13 } });
      const { message } = await runProvider(provider, streamRequest(modelFor(file, facts.model)));
      expect(server.requests.at(-1)!.url).toBe('/openai/v1/responses');
      expect(textOf(message)).toBe(facts.text);
      expect(thinkingOf(message)).toBe(facts.reasoning_summary);
      expect(toolCallsOf(message).map((c) => ({ name: c.name, arguments: c.arguments }))).toEqual(
        facts.function_calls.map((c) => ({ name: c.name, arguments: c.input })),
      );
      expect(toolCallsOf(message).map((c) => c.id.split('|')[0])).toEqual(facts.function_calls.map((c) => c.call_id));
      expect(message.stopReason).toBe(facts.function_calls.length > 0 ? 'toolUse' : 'stop');
      expectResponsesUsage(message, facts.usage);
      return;
    }
    const facts = entry.facts as unknown as ChatFacts;
    const modelId = facts.models.filter(Boolean).at(-1)!;
    server.enqueue({ body: fixtureBody(FAMILY, file), chunking: { seed: 300 + i, maxChunk: 9 + i * 13 } });
    const { message } = await runProvider(provider, streamRequest(modelFor(file, modelId)));
    expect(server.requests.at(-1)!.url).toBe('/openai/v1/chat/completions');
    expect(textOf(message)).toBe(facts.text);
    expect(thinkingOf(message)).toBe(facts.reasoning);
    expect(callsOf(message)).toEqual(facts.tool_calls.map((c) => ({ id: c.id, name: c.name, arguments: c.input })));
    expect(message.stopReason).toBe(facts.finish_reasons.at(-1) === 'tool_calls' ? 'toolUse' : 'stop');
    expect(message.model).toBe(modelId);
    expect(message.provider).toBe('azure-openai');
    const u = facts.usage;
    expect(message.usage).toEqual({
      input: u.prompt_tokens - u.prompt_tokens_details.cached_tokens,
      output: u.completion_tokens,
      reasoning: u.completion_tokens_details.reasoning_tokens,
      cacheRead: u.prompt_tokens_details.cached_tokens,
      cacheWrite: 0,
      totalTokens: u.total_tokens,
    });
  });

  const recorded = manifest.map((e) => [e.file, cassetteRequest(e)] as const).filter(([, r]) => r !== undefined);

  it.each(recorded)('request carries the essentials of the recorded request: %s', async (file, cassette) => {
    const body = cassette!.body;
    const responses = isResponses(file);
    server.enqueue({
      body: responses
        ? fixtureBody(FAMILY, manifest.find((e) => isResponses(e.file))!.file)
        : 'data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
    });
    const tools = recordedTools(body);
    const input = (body['input'] ?? []) as Array<{ role: string; content: unknown }>;
    const system = responses ? String(input.find((m) => m.role === 'developer' || m.role === 'system')?.content ?? '') : systemText(body);
    const userText = responses
      ? ((input.find((m) => m.role === 'user')?.content ?? []) as Array<{ text: string }>).map((c) => c.text).join('')
      : firstUserText(body);
    const maxTokens = (body['max_completion_tokens'] ?? body['max_output_tokens']) as number;
    await runProvider(
      provider,
      streamRequest(modelFor(file, String(body['model'])), {
        systemPrompt: system,
        messages: [{ role: 'user', content: [{ type: 'text', text: userText }], timestamp: 0 }],
        tools,
        maxTokens,
      }),
    );
    const sent = server.requests.at(-1)!;
    expect(sent.headers['api-key']).toBe(TEST_KEY);
    expect(sent.headers['authorization']).toBeUndefined();
    const ours = sent.json();
    expect(ours['model']).toBe(body['model']);
    expect(ours['stream']).toBe(true);
    if (responses) {
      expect(sent.url).toBe('/openai/v1/responses');
      expect(ours['max_output_tokens']).toBe(body['max_output_tokens']);
      expect(((ours['tools'] ?? []) as Array<{ name: string }>).map((t) => t.name)).toEqual(tools.map((t) => t.name));
    } else {
      expect(sent.url).toBe('/openai/v1/chat/completions');
      expect(ours['max_completion_tokens']).toBe(body['max_completion_tokens']);
      expect(ours['stream_options']).toEqual(body['stream_options']);
      expect(((ours['tools'] ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name)).toEqual(tools.map((t) => t.name));
      expect(systemText(ours)).toBe(system);
      expect(firstUserText(ours)).toBe(userText);
    }
  });
});

function expectResponsesUsage(message: AssistantMessage, u: ResponsesFacts['usage']): void {
  const cached = u.input_tokens_details.cached_tokens;
  expect(message.usage).toMatchObject({
    input: u.input_tokens - cached,
    output: u.output_tokens,
    reasoning: u.output_tokens_details.reasoning_tokens,
    cacheRead: cached,
    totalTokens: u.total_tokens,
  });
}

describe('azure-openai: endpoint, auth and faults', () => {
  afterEach(async () => {
    await expectAllResponsesEnded(server);
  });

  it('builds the spec deployment URL with api-version from a resource name', () => {
    const model = azureOpenai('my-deploy', { resource: 'contoso', wire: 'chat' });
    expect(model.baseUrl).toBe('https://contoso.openai.azure.com/openai/deployments/my-deploy');
    expect(model.apiVersion).toBe(AZURE_OPENAI_DEFAULT_API_VERSION);
    expect(azureUrl(model.baseUrl!, 'responses', model.apiVersion)).toBe(
      `https://contoso.openai.azure.com/openai/deployments/my-deploy/responses?api-version=${AZURE_OPENAI_DEFAULT_API_VERSION}`,
    );
    expect(azureOpenai('d', { env: { AZURE_OPENAI_RESOURCE_NAME: 'fromenv' } }).baseUrl).toContain('https://fromenv.openai.azure.com/');
    expect(azureOpenai('d', { resource: 'r' }).compat).toBeUndefined(); // Responses wire by default
  });

  it('sends api-version on the query string when the config names one', async () => {
    server.enqueue({ body: 'data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n' });
    const model = azureOpenai('dep', { baseUrl: `${server.url}/openai/deployments/dep`, apiVersion: '2024-10-21', wire: 'chat', apiKey: TEST_KEY });
    await runProvider(provider, streamRequest(model));
    expect(server.requests.at(-1)!.url).toBe('/openai/deployments/dep/chat/completions?api-version=2024-10-21');
  });

  it('429 → rateLimited with retryAfterMs; 401 → auth without the key in the message', async () => {
    const model = modelFor('chat', 'gpt-5-mini');
    server.enqueue(
      { status: 429, headers: { 'retry-after': '4' }, body: '{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation have exceeded call rate limit."}}' },
      { status: 401, body: `{"error":{"code":"401","message":"Access denied due to invalid subscription key ${TEST_KEY}."}}` },
    );
    const limited = (await runToError(provider(streamRequest(model), {}))).error;
    expect(limited).toMatchObject({ kind: 'rateLimited', retryAfterMs: 4000, provider: 'azure-openai' });
    const denied = (await runToError(provider(streamRequest(model), {}))).error;
    expect(denied.kind).toBe('auth');
    expect(denied.message).not.toContain(TEST_KEY);
  });

  it('no endpoint → a clear error before any request', async () => {
    const before = server.requests.length;
    const { error } = await runToError(provider(streamRequest(azureOpenai('dep', { apiKey: TEST_KEY, env: {} })), {}));
    expect(error.message).toContain('AZURE_OPENAI_BASE_URL');
    expect(server.requests.length).toBe(before);
  });
});
