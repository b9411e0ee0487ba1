import type { ProviderRegistry } from './registry.js';
import { openaiResponsesProvider } from './openai-responses.js';
import { googleProvider } from './google.js';
import { googleVertexProvider } from './google-vertex.js';
import { bedrockProvider } from './bedrock.js';

/**
 * Registers the built-in protocols of part B: OpenAI Responses, Gemini, Vertex AI and Bedrock
 * ConverseStream. (`defaultProviderRegistry()` registers the same protocols lazily.) Bedrock's AWS
 * codecs are imported only when a Bedrock stream starts.
 */
export function registerBuiltinProvidersB(registry: ProviderRegistry): ProviderRegistry {
  return registry
    .register('openai-responses', openaiResponsesProvider)
    .register('google-generative-ai', googleProvider)
    .register('google-vertex', googleVertexProvider)
    .register('bedrock-converse-stream', bedrockProvider);
}
