import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastValueFrom, Observable, of, throwError, toArray } from 'rxjs';
import { credentialFrom, withCredentials } from '../../src/providers/credentials.js';
import type { CredentialProvider } from '../../src/providers/credentials.js';
import { googleVertexProvider } from '../../src/providers/google-vertex.js';
import { ProviderError } from '../../src/types/errors.js';
import { emptyAssistant } from '../../src/types/message.js';
import type { ModelConfig, Provider, StreamEvent } from '../../src/types/provider.js';
import { startFixtureServer } from './fixture-server.js';
import type { FixtureServer } from './fixture-server.js';
import { request, run, runToError } from './harness.js';

const model: ModelConfig = { id: 'm', api: 'google-vertex', provider: 'google-vertex', project: 'p', region: 'us-east5' };
const message = emptyAssistant('m', 'google-vertex', 0);
const ok = (): Observable<StreamEvent> => of<StreamEvent[]>({ type: 'start', partial: message }, { type: 'done', message });
const authError = () => ProviderError.auth('token expired', { status: 401 });

/** A credential source handing out k1, k2, ... and counting invalidations. */
function rotatingKeys(): CredentialProvider & { invalidations: number; fetches: number } {
  let version = 1;
  const source = {
    invalidations: 0,
    fetches: 0,
    get: () => {
      source.fetches++;
      return `k${version}`;
    },
    invalidate: () => {
      source.invalidations++;
      version++;
    },
  };
  return source;
}

/** A provider that answers with `respond(key)` and records the keys it was called with. */
function keyed(respond: (key: string | undefined) => Observable<StreamEvent>): Provider & { keys: Array<string | undefined> } {
  const keys: Array<string | undefined> = [];
  const provider: Provider = (req) => {
    keys.push(req.apiKey);
    return respond(req.apiKey);
  };
  return Object.assign(provider, { keys });
}

describe('withCredentials', () => {
  it('passes the credential as the call key', async () => {
    const inner = keyed(() => ok());
    const keys = rotatingKeys();
    const events = await lastValueFrom(withCredentials(inner, keys)(request(model), {}).pipe(toArray()));
    expect(events.map((e) => e.type)).toEqual(['start', 'done']);
    expect(inner.keys).toEqual(['k1']);
    expect(keys.invalidations).toBe(0);
  });

  it('on an auth error invalidates the credential and retries exactly once with a fresh one', async () => {
    const inner = keyed((key) => (key === 'k1' ? throwError(authError) : ok()));
    const keys = rotatingKeys();
    const events = await lastValueFrom(withCredentials(inner, keys)(request(model), {}).pipe(toArray()));
    expect(events.map((e) => e.type)).toEqual(['start', 'done']);
    expect(inner.keys).toEqual(['k1', 'k2']);
    expect(keys.invalidations).toBe(1);
  });

  it('a second auth error propagates (and the credential is invalidated again for the next call)', async () => {
    const inner = keyed(() => throwError(authError));
    const keys = rotatingKeys();
    const { error } = await runToError(withCredentials(inner, keys)(request(model), {}));
    expect(error.kind).toBe('auth');
    expect(inner.keys).toEqual(['k1', 'k2']);
    expect(keys.invalidations).toBe(2);
  });

  it('does not retry or invalidate on other errors', async () => {
    const inner = keyed(() => throwError(() => ProviderError.rateLimited('slow down', 1000)));
    const keys = rotatingKeys();
    const { error } = await runToError(withCredentials(inner, keys)(request(model), {}));
    expect(error.kind).toBe('rateLimited');
    expect(inner.keys).toEqual(['k1']);
    expect(keys.invalidations).toBe(0);
  });

  it('does not replay a stream that already emitted before its auth error', async () => {
    const inner = keyed(
      () =>
        new Observable<StreamEvent>((s) => {
          s.next({ type: 'start', partial: message });
          s.error(authError());
        }),
    );
    const keys = rotatingKeys();
    const seen: string[] = [];
    const error = await new Promise<unknown>((resolve) =>
      withCredentials(inner, keys)(request(model), {}).subscribe({ next: (e) => seen.push(e.type), error: resolve }),
    );
    expect((error as ProviderError).kind).toBe('auth');
    expect(seen).toEqual(['start']);
    expect(inner.keys).toEqual(['k1']);
  });

  it('reports a failing credential source as an auth error, trying it once more', async () => {
    let calls = 0;
    const failing: CredentialProvider = {
      get: () => {
        calls++;
        return Promise.reject(new Error('metadata server unreachable'));
      },
      invalidate: () => {},
    };
    const { error } = await runToError(withCredentials(keyed(() => ok()), failing)(request(model), {}));
    expect(error.kind).toBe('auth');
    expect(error.message).toMatch(/Could not obtain a credential for google-vertex: metadata server unreachable/);
    expect(calls).toBe(2);
  });

  it('is cold: nothing is fetched until subscription', () => {
    const keys = rotatingKeys();
    withCredentials(keyed(() => ok()), keys)(request(model), {});
    expect(keys.fetches).toBe(0);
  });
});

describe('credentialFrom', () => {
  it('caches until invalidated, shares a pending fetch and does not cache failures', async () => {
    let n = 0;
    let fail = false;
    const cred = credentialFrom(async () => {
      n++;
      if (fail) throw new Error('down');
      return `token-${n}`;
    });
    expect(await Promise.all([cred.get(), cred.get()])).toEqual(['token-1', 'token-1']);
    expect(await cred.get()).toBe('token-1');
    cred.invalidate();
    fail = true;
    await expect(cred.get()).rejects.toThrow('down');
    fail = false;
    expect(await cred.get()).toBe('token-3');
    expect(n).toBe(3);
  });
});

describe('withCredentials over a real socket (Vertex AI)', () => {
  let server: FixtureServer;
  beforeAll(async () => {
    server = await startFixtureServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('refreshes an expired OAuth token after a 401 and succeeds with the new one', async () => {
    server.enqueue(
      { status: 401, body: JSON.stringify({ error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } }) },
      { body: 'data: {"candidates":[{"content":{"parts":[{"text":"Olá"}]},"finishReason":"STOP"}],"modelVersion":"gemini-2.5-flash"}\r\n\r\n' },
    );
    let n = 0;
    const token = credentialFrom(() => `ya29.token-number-${++n}`);
    const { message: result } = await run(withCredentials(googleVertexProvider, token), request({ ...model, baseUrl: server.url }));
    expect(result.content).toEqual([{ type: 'text', text: 'Olá' }]);
    const auths = server.requests.slice(-2).map((r) => r.headers.authorization);
    expect(auths).toEqual(['Bearer ya29.token-number-1', 'Bearer ya29.token-number-2']);
  });
});
