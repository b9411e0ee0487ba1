import { describe, expect, it } from 'vitest';
import { bedrock, google, googleVertex, openaiResponses } from '../../src/providers/models-responses-gemini-bedrock.js';
import { registerBuiltinProviders } from '../../src/providers/builtin-providers.js';
import { ProviderRegistry } from '../../src/providers/registry.js';
import { openaiResponsesProvider } from '../../src/providers/openai-responses.js';
import { googleProvider } from '../../src/providers/google.js';
import { googleVertexProvider } from '../../src/providers/google-vertex.js';
import { bedrockProvider } from '../../src/providers/bedrock.js';
import { anthropicProvider } from '../../src/providers/anthropic.js';
import { openAiCompletionsProvider } from '../../src/providers/openai-completions.js';
import { azureOpenAiProvider } from '../../src/providers/azure-openai.js';
import { anthropic, azureOpenai, openai } from '../../src/providers/models.js';
import { Usage } from '../../src/types/usage.js';

describe('ModelConfig constructors: OpenAI Responses, Gemini, Vertex AI, Bedrock', () => {
  it('openaiResponses: protocol, provider, endpoint and OpenAI prices; compatible backends by provider id', () => {
    const m = openaiResponses('gpt-5-mini');
    expect(m).toMatchObject({ id: 'gpt-5-mini', api: 'openai-responses', provider: 'openai', baseUrl: 'https://api.openai.com/v1', reasoning: true });
    expect(m.cost).toEqual({ input: 0.25, output: 2, cacheRead: 0.025 });
    const router = openaiResponses('openai/gpt-oss-20b', { provider: 'openrouter', baseUrl: 'https://openrouter.ai/api/v1' });
    expect(router).toMatchObject({ provider: 'openrouter', baseUrl: 'https://openrouter.ai/api/v1' });
    expect(router.cost).toBeUndefined();
  });

  it('google and googleVertex share the Gemini catalog; options win', () => {
    expect(google('gemini-2.5-flash')).toMatchObject({ api: 'google-generative-ai', provider: 'google', baseUrl: 'https://generativelanguage.googleapis.com', contextWindow: 1_048_576 });
    expect(google('gemini-2.5-flash-lite').cost!.input).toBe(0.1); // longest prefix, not gemini-2.5-flash
    const v = googleVertex('gemini-2.5-pro', { project: 'p', region: 'europe-west4', maxTokens: 1000 });
    expect(v).toMatchObject({ api: 'google-vertex', provider: 'google-vertex', project: 'p', region: 'europe-west4', maxTokens: 1000 });
    expect(v.baseUrl).toBeUndefined();
  });

  it('bedrock prices Claude inference profiles like Claude and Nova from its own catalog', () => {
    const claude = bedrock('us.anthropic.claude-sonnet-4-5-20250929-v1:0', { region: 'us-west-2' });
    expect(claude).toMatchObject({ api: 'bedrock-converse-stream', provider: 'bedrock', region: 'us-west-2', reasoning: true });
    expect(claude.cost).toMatchObject({ input: 3, output: 15 });
    const nova = bedrock('us.amazon.nova-micro-v1:0');
    expect(nova.cost).toMatchObject({ input: 0.035, output: 0.14 });
    // Usage of the recorded nova-micro stream (13 in, 82 out) priced with the config.
    expect(Usage.estimatedCost({ ...Usage.empty(), input: 13, output: 82 }, nova.cost!)).toBeCloseTo((13 * 0.035 + 82 * 0.14) / 1e6, 12);
    expect(bedrock('mystery.model-v1').cost).toBeUndefined();
  });
});

describe('registerBuiltinProviders', () => {
  it('registers the seven built-in protocols on a registry, each resolving its own models', () => {
    const registry = registerBuiltinProviders(new ProviderRegistry());
    expect(registry.resolve(anthropic('claude-sonnet-4-5'))).toBe(anthropicProvider);
    expect(registry.resolve(openai('gpt-4o'))).toBe(openAiCompletionsProvider);
    expect(registry.resolve(azureOpenai('my-deployment', { resource: 'r' }))).toBe(azureOpenAiProvider);
    expect(registry.resolve(openaiResponses('gpt-5'))).toBe(openaiResponsesProvider);
    expect(registry.resolve(google('gemini-2.5-pro'))).toBe(googleProvider);
    expect(registry.resolve(googleVertex('gemini-2.5-pro'))).toBe(googleVertexProvider);
    expect(registry.resolve(bedrock('amazon.nova-lite-v1:0'))).toBe(bedrockProvider);
  });
});
