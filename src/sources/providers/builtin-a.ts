import type { ProviderRegistry } from './registry.js';
import { anthropicProvider } from './anthropic.js';
import { openAiCompletionsProvider } from './openai-completions.js';
import { azureOpenAiProvider } from './azure-openai.js';

/**
 * Registers the built-in HTTP protocols of part A: Anthropic, Chat Completions, Azure OpenAI.
 * (`defaultProviderRegistry()` registers the same protocols lazily, so that importing phi-rx does
 * not load the HTTP stack.)
 */
export function registerBuiltinProvidersA(registry: ProviderRegistry): ProviderRegistry {
  return registry
    .register('anthropic-messages', anthropicProvider)
    .register('openai-completions', openAiCompletionsProvider)
    .register('azure-openai', azureOpenAiProvider);
}
