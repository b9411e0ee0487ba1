import { runtimeEnv } from './runtime-env.js';
import type { ModelConfig, Provider } from '../types/provider.js';
import { ProviderError } from '../types/errors.js';
import { joinUrl } from '../sources/http/index.js';
import { streamGoogle } from './google.js';
import type { GoogleEndpoint } from './google.js';
import { failFast, missingKeyError, requestSecrets, resolveApiKey, withModelHeaders } from './provider-kit.js';
import type { ProviderHttpOptions } from './provider-kit.js';

export const GOOGLE_CLOUD_ACCESS_TOKEN_ENV = 'GOOGLE_CLOUD_ACCESS_TOKEN';

/*
 * Google Vertex AI: the Gemini body and stream (google.ts) at a project/region URL, with an OAuth2
 * bearer token instead of an API key. Tokens expire within the hour: wrap the provider with
 * `withCredentials` so that a 401 refreshes the token and retries once.
 */

/**
 * `https://{region}-aiplatform.googleapis.com/v1/projects/{project}/locations/{region}/publishers/google/models/{model}:streamGenerateContent?alt=sse`;
 * `baseUrl`, when set, replaces the origin. Region `global` uses the global host.
 */
export function vertexStreamUrl(model: ModelConfig, project: string, region: string): string {
  const origin = model.baseUrl ?? (region === 'global' ? 'https://aiplatform.googleapis.com' : `https://${region}-aiplatform.googleapis.com`);
  const path =
    `v1/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(region)}` +
    `/publishers/google/models/${encodeURIComponent(model.id)}:streamGenerateContent?alt=sse`;
  return joinUrl(origin, path);
}

/**
 * A Provider for Gemini on Vertex AI. Placement comes from `model.project` / `model.region`
 * (else `GOOGLE_CLOUD_PROJECT` / `GOOGLE_CLOUD_LOCATION`); the OAuth2 bearer token from the call's
 * key (`getApiKey`, or a `withCredentials` wrapper), the model's `apiKey`, else
 * `GOOGLE_CLOUD_ACCESS_TOKEN`. Invented tool-call ids are `vertex-fc-{n}`.
 *
 * @example
 * const token = credentialFrom(() => getAccessTokenSomehow());
 * registry.register('google-vertex', withCredentials(createGoogleVertexProvider(), token));
 */
export function createGoogleVertexProvider(http: ProviderHttpOptions = {}): Provider {
  return (request, options) => {
    const { model } = request;
    const env = http.env ?? runtimeEnv();
    const project = model.project ?? env['GOOGLE_CLOUD_PROJECT'];
    const region = model.region ?? env['GOOGLE_CLOUD_LOCATION'];
    if (!project || !region) {
      return failFast(
        ProviderError.other(
          `Vertex AI model "${model.id}" needs a project and a region: set them on the ModelConfig ` +
            `(googleVertex(id, { project, region })) or in GOOGLE_CLOUD_PROJECT / GOOGLE_CLOUD_LOCATION.`,
          { provider: model.provider },
        ),
      );
    }
    const token = resolveApiKey(request, GOOGLE_CLOUD_ACCESS_TOKEN_ENV, http);
    if (!token) return failFast(missingKeyError(model, GOOGLE_CLOUD_ACCESS_TOKEN_ENV));
    const headers = withModelHeaders({ 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${token}` }, model);
    const endpoint: GoogleEndpoint = {
      url: vertexStreamUrl(model, project, region),
      headers,
      provider: model.provider,
      secrets: requestSecrets(headers, model, token),
      idPrefix: 'vertex-fc-',
    };
    return streamGoogle(request, options, endpoint, http);
  };
}

/** The Vertex AI Provider with default transport settings. */
export const googleVertexProvider: Provider = createGoogleVertexProvider();
