import type { ProviderRegistry } from './registry.js';
import { anthropicProvider } from './anthropic.js';
import { openAiCompletionsProvider } from './openai-completions.js';
import { azureOpenAiProvider } from './azure-openai.js';
import { openaiResponsesProvider } from './openai-responses.js';
import { googleProvider } from './google.js';
import { googleVertexProvider } from './google-vertex.js';
import { bedrockProvider } from './bedrock.js';

/**
 * Registers the seven built-in wire protocols on `registry`: Anthropic Messages, Chat Completions,
 * Azure OpenAI, OpenAI Responses, Gemini, Vertex AI and Bedrock ConverseStream.
 * (`defaultProviderRegistry()` registers the same protocols lazily, so that importing phi-rx does
 * not load the HTTP stack; Bedrock's AWS codecs are imported only when a Bedrock stream starts.)
 *
 * @example
 * const registry = registerBuiltinProviders(new ProviderRegistry()).register('my-api', myProvider);
 */
export function registerBuiltinProviders(registry: ProviderRegistry): ProviderRegistry {
  return registry
    .register('anthropic-messages', anthropicProvider)
    .register('openai-completions', openAiCompletionsProvider)
    .register('azure-openai', azureOpenAiProvider)
    .register('openai-responses', openaiResponsesProvider)
    .register('google-generative-ai', googleProvider)
    .register('google-vertex', googleVertexProvider)
    .register('bedrock-converse-stream', bedrockProvider);
}
