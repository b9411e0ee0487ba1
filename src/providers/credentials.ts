import { catchError, defer, from, Observable, switchMap, tap, throwError } from 'rxjs';
import type { Provider, StreamEvent } from '../types/provider.js';
import { errorMessage, isProviderError, ProviderError } from '../types/errors.js';

/**
 * A source of API keys or bearer tokens that can go stale: OAuth access tokens (Vertex AI),
 * short-lived gateway keys, rotated secrets. `get` may fetch; `invalidate` says the last value
 * was refused, so the next `get` must fetch a fresh one.
 */
export interface CredentialProvider {
  get(): Promise<string> | string;
  invalidate(): void;
}

/**
 * A CredentialProvider that caches what `fetch` returns until it is invalidated. Concurrent
 * `get`s share one fetch; a failed fetch is not cached.
 *
 * @example
 * const token = credentialFrom(async () => (await auth.getAccessToken()).token!);
 */
export function credentialFrom(fetch: () => Promise<string> | string): CredentialProvider {
  let cached: Promise<string> | undefined;
  return {
    get() {
      if (cached) return cached;
      const attempt = Promise.resolve().then(fetch);
      cached = attempt;
      attempt.catch(() => {
        if (cached === attempt) cached = undefined;
      });
      return attempt;
    },
    invalidate() {
      cached = undefined;
    },
  };
}

/**
 * Wraps a Provider so that each call takes its key from `credentials` (as `request.apiKey`). When
 * the call fails with an `auth` ProviderError before emitting anything, the credential is
 * invalidated and the call is made once more with a fresh one; a second auth error propagates
 * (phi-core's refresh-once rule). Auth errors after events were emitted propagate at once, since
 * a stream cannot be replayed without duplicating what was already seen. Other errors pass through
 * untouched; a `get` that fails is reported as an `auth` error.
 *
 * ```
 * get:       k1---------------k2
 * provider:  --#(auth)         --a--b--done|
 * result:    ------------------ --a--b--done|   (k1 invalidated, one retry with k2)
 * ```
 *
 * @example
 * const vertex = withCredentials(createGoogleVertexProvider(), credentialFrom(fetchAccessToken));
 * registry.register('google-vertex', vertex);
 */
export function withCredentials(provider: Provider, credentials: CredentialProvider): Provider {
  return (request, options) =>
    defer(() => {
      let emitted = false;
      const attempt = (retriesLeft: number): Observable<StreamEvent> =>
        from(fetchCredential(credentials, request.model.provider)).pipe(
          switchMap((apiKey) => provider({ ...request, apiKey }, options)),
          tap(() => (emitted = true)),
          catchError((error: unknown) => {
            if (!isProviderError(error) || error.kind !== 'auth') return throwError(() => error);
            credentials.invalidate();
            if (retriesLeft === 0 || emitted) return throwError(() => error);
            return attempt(retriesLeft - 1);
          }),
        );
      return attempt(1);
    });
}

async function fetchCredential(credentials: CredentialProvider, provider: string): Promise<string> {
  try {
    return await credentials.get();
  } catch (error) {
    if (isProviderError(error)) throw error;
    throw ProviderError.auth(`Could not obtain a credential for ${provider}: ${errorMessage(error)}`, { provider, cause: error });
  }
}
