import { defer, from, mergeMap, throwError } from 'rxjs';
import type { ApiProtocol, ModelConfig, Provider } from '../types/provider.js';
import { errorMessage, ProviderError } from '../types/errors.js';

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

/**
 * A Provider whose module is imported on its first call. Still cold: the import starts when the
 * stream is subscribed, and later calls go straight to the loaded provider.
 *
 * @example
 * registry.register('my-api', lazyProvider('My API', async () => (await import('./my-provider.js')).myProvider));
 */
export function lazyProvider(name: string, load: () => Promise<Provider>): Provider {
  let loaded: Provider | undefined;
  let loading: Promise<Provider> | undefined;
  const get = (): Promise<Provider> => {
    loading ??= load().then(
      (provider) => (loaded = provider),
      (error: unknown) => {
        loading = undefined; // let a later call try again
        throw ProviderError.other(`Could not load the ${name} provider: ${errorMessage(error)}`);
      },
    );
    return loading;
  };
  return (request, options) =>
    loaded ? loaded(request, options) : defer(() => from(get())).pipe(mergeMap((provider) => provider(request, options)));
}

let defaultRegistry: ProviderRegistry | undefined;

/**
 * The process-wide registry with every built-in protocol registered. Each protocol's module (and
 * with it undici, eventsource-parser and the AWS codecs) is imported when a stream of that
 * protocol first starts, so `import 'phi-rx'` and runs with `config.provider` never load them.
 */
export function defaultProviderRegistry(): ProviderRegistry {
  defaultRegistry ??= new ProviderRegistry()
    .register('anthropic-messages', lazyProvider('Anthropic', async () => (await import('./anthropic.js')).anthropicProvider))
    .register('openai-completions', lazyProvider('OpenAI Chat Completions', async () => (await import('./openai-completions.js')).openAiCompletionsProvider))
    .register('azure-openai', lazyProvider('Azure OpenAI', async () => (await import('./azure-openai.js')).azureOpenAiProvider))
    .register('openai-responses', lazyProvider('OpenAI Responses', async () => (await import('./openai-responses.js')).openaiResponsesProvider))
    .register('google-generative-ai', lazyProvider('Gemini', async () => (await import('./google.js')).googleProvider))
    .register('google-vertex', lazyProvider('Vertex AI', async () => (await import('./google-vertex.js')).googleVertexProvider))
    .register('bedrock-converse-stream', lazyProvider('Bedrock', async () => (await import('./bedrock.js')).bedrockProvider));
  return defaultRegistry;
}
