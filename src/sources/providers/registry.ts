import type { ApiProtocol, ModelConfig, Provider } from '../../types/provider.js';
import { ProviderError } from '../../types/errors.js';
import { throwError } from 'rxjs';
import { anthropicProvider } from './anthropic.js';
import { openAiCompletionsProvider } from './openai-completions.js';
import { azureOpenAiProvider } from './azure-openai.js';
import { registerBuiltinProvidersB } from './builtin-b.js';

/**
 * Dispatches a model to the Provider for its wire protocol. `agentLoop` uses the default
 * registry unless the config names a `provider` of its own.
 */
export class ProviderRegistry {
  private readonly providers = new Map<ApiProtocol, Provider>();

  register(api: ApiProtocol, provider: Provider): this {
    this.providers.set(api, provider);
    return this;
  }

  has(api: ApiProtocol): boolean {
    return this.providers.has(api);
  }

  /** The provider for `model.api`; a provider that fails with a clear error when none is registered. */
  resolve(model: ModelConfig): Provider {
    const provider = this.providers.get(model.api);
    if (provider) return provider;
    return () =>
      throwError(
        () =>
          new ProviderError(
            'other',
            `No provider registered for api "${model.api}" (model "${model.id}"). ` +
              `Register one with ProviderRegistry.register, or pass config.provider.`,
          ),
      );
  }
}

let defaultRegistry: ProviderRegistry | undefined;

/** Registers the built-in HTTP protocols of part A: Anthropic, Chat Completions, Azure OpenAI. */
export function registerBuiltinProvidersA(registry: ProviderRegistry): ProviderRegistry {
  return registry
    .register('anthropic-messages', anthropicProvider)
    .register('openai-completions', openAiCompletionsProvider)
    .register('azure-openai', azureOpenAiProvider);
}

/**
 * The process-wide registry with every built-in protocol registered. Providers are cheap
 * closures; heavy dependencies (the AWS codecs) are imported only when a Bedrock stream starts.
 */
export function defaultProviderRegistry(): ProviderRegistry {
  defaultRegistry ??= registerBuiltinProvidersB(registerBuiltinProvidersA(new ProviderRegistry()));
  return defaultRegistry;
}
