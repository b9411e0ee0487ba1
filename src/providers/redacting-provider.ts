import { catchError, throwError } from 'rxjs';
import type { Provider } from '../types/provider.js';
import { ProviderError, errorMessage, isProviderError } from '../types/errors.js';
import { redactSecrets } from '../sources/http/errors.js';

/**
 * The same provider with `secrets` replaced by `[REDACTED]` in every error it fails with, so that
 * values the caller knows to be secret (a config's `${ENV}` values, a gateway URL's token) never
 * reach `AgentEnd`, `events$`, a saved session or a span, wherever the provider put them in its
 * message. The built-in providers already redact their key and headers; this covers what only the
 * caller knows. Kind, status and `retryAfterMs` are kept, so retries and fallbacks behave the same;
 * the cause is dropped (a raw transport error may hold the secret).
 *
 * ```
 * provider:  --s--d--#  ProviderError('… token-123 …')
 * redacting: --s--d--#  ProviderError('… [REDACTED] …')
 * ```
 *
 * @example
 * const provider = redactingProvider((request, options) => defaultProviderRegistry().resolve(request.model)(request, options), [process.env.GATEWAY_TOKEN!]);
 */
export function redactingProvider(provider: Provider, secrets: readonly string[]): Provider {
  if (secrets.length === 0) return provider;
  return (request, options) => provider(request, options).pipe(catchError((error: unknown) => throwError(() => redactedError(error, secrets))));
}

function redactedError(error: unknown, secrets: readonly string[]): ProviderError {
  const provider = isProviderError(error) ? error.provider : undefined;
  const init = {
    ...(isProviderError(error) && error.status !== undefined ? { status: error.status } : {}),
    ...(isProviderError(error) && error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
    ...(provider !== undefined ? { provider } : {}),
  };
  return new ProviderError(isProviderError(error) ? error.kind : 'other', redactSecrets(errorMessage(error), secrets), init);
}
