import { runtimeEnv } from './runtime-env.js';
import type { Observable } from 'rxjs';
import type { ModelConfig, Provider, ProviderOptions, StreamEvent, StreamRequest } from '../types/provider.js';
import { ProviderError } from '../types/errors.js';
import { joinUrl } from '../sources/http/request.js';
import { streamChatCompletions } from './openai-completions.js';
import { streamResponses } from './openai-responses.js';
import { failFast, missingKeyError, requestSecrets, resolveApiKey, withModelHeaders } from './provider-kit.js';
import type { ProviderEndpoint, ProviderHttpOptions } from './provider-kit.js';

/**
 * Azure OpenAI (spec 000 §5): the `api-key` header instead of a bearer token, a resource- or
 * deployment-scoped base URL, and an `api-version` query parameter. Two wire formats share
 * the protocol id `azure-openai`:
 * - Responses (the default, per spec): `{baseUrl}/responses`, parsed by the OpenAI Responses reader;
 * - Chat Completions, chosen by a config carrying `compat` flags (`azureOpenai(d, { wire: 'chat' })`):
 *   `{baseUrl}/chat/completions`, parsed like OpenAI's.
 */

export const AZURE_OPENAI_API_KEY_ENV = 'AZURE_OPENAI_API_KEY';
/** Read when the config has no baseUrl, e.g. `https://contoso.openai.azure.com/openai/v1`. */
export const AZURE_OPENAI_BASE_URL_ENV = 'AZURE_OPENAI_BASE_URL';

/** `{baseUrl}/{path}`, plus `?api-version=` when the config names one. */
export function azureUrl(baseUrl: string, path: string, apiVersion: string | undefined): string {
  const url = joinUrl(baseUrl, path);
  if (apiVersion === undefined) return url;
  return `${url}${url.includes('?') ? '&' : '?'}api-version=${encodeURIComponent(apiVersion)}`;
}

/** True when the config asks for Chat Completions rather than the Responses API. */
export const usesChatCompletions = (model: ModelConfig): boolean => model.compat !== undefined;

/**
 * A Provider for Azure OpenAI. The key comes from the call, the config, or
 * `AZURE_OPENAI_API_KEY`; the base URL from the config or `AZURE_OPENAI_BASE_URL`.
 *
 * @example
 * registry.register('azure-openai', createAzureOpenAiProvider({ idleTimeoutMs: 30_000 }));
 */
export function createAzureOpenAiProvider(http: ProviderHttpOptions = {}): Provider {
  return (request: StreamRequest, options: ProviderOptions): Observable<StreamEvent> => {
    const { model } = request;
    const apiKey = resolveApiKey(request, AZURE_OPENAI_API_KEY_ENV, http);
    if (!apiKey) return failFast(missingKeyError(model, AZURE_OPENAI_API_KEY_ENV));
    const baseUrl = model.baseUrl ?? (http.env ?? runtimeEnv())[AZURE_OPENAI_BASE_URL_ENV];
    if (!baseUrl) {
      return failFast(
        ProviderError.other(
          `Azure OpenAI model "${model.id}" has no endpoint: pass baseUrl or resource to azureOpenai(), or set ${AZURE_OPENAI_BASE_URL_ENV}.`,
          { provider: model.provider },
        ),
      );
    }
    const headers = withModelHeaders({ 'content-type': 'application/json', accept: 'text/event-stream', 'api-key': apiKey }, model);
    const endpoint = (path: string): ProviderEndpoint => ({ url: azureUrl(baseUrl, path, model.apiVersion), headers, provider: model.provider, secrets: requestSecrets(headers, model, apiKey) });
    if (usesChatCompletions(model)) return streamChatCompletions(request, options, endpoint('chat/completions'), http);
    return streamResponses(request, options, endpoint('responses'), http);
  };
}

/** The Azure OpenAI provider on the shared HTTP dispatcher. */
export const azureOpenAiProvider: Provider = createAzureOpenAiProvider();
