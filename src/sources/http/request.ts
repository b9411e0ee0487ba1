import { Observable, asyncScheduler, throwError, timeout } from 'rxjs';
import type { SchedulerLike } from 'rxjs';
import type { Dispatcher } from 'undici';
import { ProviderError } from '../../types/errors.js';
import { classifyHttpError, classifyNetworkError } from './errors.js';

/** No bytes for this long in the middle of a response body fails the stream (ms). */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
/** Longest wait from sending the request to the first byte of the response body (ms). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;
/**
 * Most response body bytes a provider call reads (256 MiB): past it the request is aborted and the
 * stream fails with a non-retryable ProviderError, so a hostile or broken endpoint cannot make the
 * client hold an unbounded body.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 256 * 1024 * 1024;
/** Error bodies longer than this are cut before classification. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

let sharedDispatcher: Dispatcher | undefined;

type Undici = typeof import('undici');
/** A variable specifier, so browser bundlers leave undici (Node only) out of the bundle. */
const UNDICI: string = 'undici';
let undiciModule: Promise<Undici> | undefined;
const loadUndici = (): Promise<Undici> => (undiciModule ??= import(/* webpackIgnore: true */ /* @vite-ignore */ UNDICI) as Promise<Undici>);

/** True under Node (not Deno, Bun or a browser): requests then go through undici's pooled dispatcher. */
export const isNodeRuntime = (): boolean => {
  const proc = (globalThis as { process?: { versions?: Record<string, string | undefined> } }).process;
  return typeof proc?.versions?.node === 'string' && proc.versions['bun'] === undefined && !('Deno' in globalThis);
};

/**
 * The dispatcher every provider request goes through on Node unless a call passes its own: one
 * keep-alive connection pool per origin, loaded on first use. Timeouts are ours (see
 * {@link httpStream}), so undici's own header/body timeouts are off. Elsewhere (browsers, Deno,
 * Bun, workers) requests use the standard `fetch`.
 */
export async function getHttpDispatcher(): Promise<Dispatcher> {
  if (sharedDispatcher) return sharedDispatcher;
  const { Agent } = await loadUndici();
  sharedDispatcher ??= new Agent({
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 300_000,
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  return sharedDispatcher;
}

/**
 * Replaces the shared dispatcher, e.g. with an undici `ProxyAgent` or a `MockAgent`. The
 * previous one is not closed (it may be yours); pass `undefined` to go back to the default.
 *
 * @example
 * import { ProxyAgent } from 'undici';
 * setHttpDispatcher(new ProxyAgent(process.env.HTTPS_PROXY!));
 */
export function setHttpDispatcher(dispatcher: Dispatcher | undefined): void {
  sharedDispatcher = dispatcher;
}

/** One HTTP request. `body` is sent as is (providers send JSON text). */
export interface HttpRequestInit {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

export interface HttpStreamOptions {
  /** Provider id put on every error (`anthropic`, `openai`, ...). */
  provider: string;
  /** Values that must never appear in an error message, typically the API key. */
  secrets?: readonly string[];
  /** Aborting it cancels the request: the stream fails with ProviderError `cancelled`. */
  signal?: AbortSignal | undefined;
  /** Time source of both timeouts and of HTTP-date `retry-after`. Default `asyncScheduler`. */
  scheduler?: SchedulerLike | undefined;
  /** Max gap between two body chunks, ms. Default {@link DEFAULT_IDLE_TIMEOUT_MS}. */
  idleTimeoutMs?: number | undefined;
  /** Max time from subscribing to the first body chunk, ms. Default {@link DEFAULT_REQUEST_TIMEOUT_MS}. */
  requestTimeoutMs?: number | undefined;
  /** Most body bytes read before the call fails and the socket is closed. Default {@link DEFAULT_MAX_RESPONSE_BYTES}. */
  maxResponseBytes?: number | undefined;
  /** This call's dispatcher on Node; default {@link getHttpDispatcher}. */
  dispatcher?: Dispatcher | undefined;
  /**
   * A standard `fetch` to send the request with instead of undici. Default: undici on Node, the
   * global `fetch` everywhere else.
   */
  fetch?: typeof globalThis.fetch | undefined;
}

type FetchBody = NonNullable<Parameters<typeof globalThis.fetch>[1]>['body'];

/** A response as both transports give it: status, headers, the body as byte chunks. */
interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined> | { get(name: string): string | null };
  body: AsyncIterable<Uint8Array> & { destroy?: () => void };
}

async function send(url: string, init: HttpRequestInit, signal: AbortSignal, options: HttpStreamOptions): Promise<RawResponse> {
  const fetchImpl = options.fetch ?? (isNodeRuntime() ? undefined : globalThis.fetch);
  if (fetchImpl === undefined) {
    const { request } = await loadUndici();
    const response = await request(url, {
      method: init.method ?? 'POST',
      headers: init.headers ?? {},
      body: init.body ?? null,
      signal,
      dispatcher: options.dispatcher ?? (await getHttpDispatcher()),
    });
    return { status: response.statusCode, headers: response.headers, body: response.body as RawResponse['body'] };
  }
  const response = await fetchImpl(url, {
    method: init.method ?? 'POST',
    headers: init.headers ?? {},
    body: (init.body ?? null) as FetchBody,
    signal,
  });
  return { status: response.status, headers: response.headers, body: readableChunks(response.body, signal) };
}

/** A web ReadableStream's chunks as an AsyncIterable (works where streams are not async-iterable, e.g. Safari). */
function readableChunks(stream: ReadableStream<Uint8Array> | null, signal: AbortSignal): RawResponse['body'] {
  const reader = stream?.getReader();
  return {
    async *[Symbol.asyncIterator]() {
      if (!reader) return;
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          yield value;
        }
      } finally {
        if (!signal.aborted) await reader.cancel().catch(() => undefined);
      }
    },
    destroy: () => void reader?.cancel().catch(() => undefined),
  };
}

/**
 * A cold HTTP request whose response body arrives as byte chunks.
 *
 * Nothing is sent until subscription. A 2xx response emits its body chunks and completes when
 * the body ends. A non-2xx response is read (up to 64 KiB) and fails the stream with the
 * ProviderError chosen by {@link classifyHttpError} (429/529/overloaded → `rateLimited` with
 * `retryAfterMs`; 401/403 → `auth`; 400/413 + overflow phrase → `contextOverflow`; 5xx →
 * `network`, which is retryable; other 4xx → `api`). Transport failures (refused, reset,
 * hang-up) fail it with `network`.
 *
 * Unsubscribing aborts the request; undici then destroys the connection, so a half-read
 * response never returns a dirty socket to the pool. Two timeouts run on `scheduler`: no body
 * byte within `requestTimeoutMs` of subscribing, or no byte for `idleTimeoutMs` between chunks,
 * fails the stream with a retryable `network` error and aborts the request. A body longer than
 * `maxResponseBytes` fails it with a non-retryable ProviderError `other` ({@link responseTooLarge})
 * and aborts the request, which closes the socket.
 *
 * ```
 * server:   headers --c1--c2--------------------X (stalls)
 * httpStream:        --c1--c2--[idleTimeoutMs]--#  ProviderError(network)
 * ```
 *
 * @example
 * httpStream('https://api.example.com/v1/stream', { method: 'POST', headers, body: JSON.stringify(req) },
 *   { provider: 'example', secrets: [apiKey], idleTimeoutMs: 30_000 })
 *   .pipe(decodeSse())
 *   .subscribe((event) => console.log(event.data));
 */
export function httpStream(url: string, init: HttpRequestInit, options: HttpStreamOptions): Observable<Uint8Array> {
  const scheduler = options.scheduler ?? asyncScheduler;
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  return rawHttpStream(url, init, options, scheduler).pipe(
    timeout({
      first: requestTimeoutMs,
      each: idleTimeoutMs,
      scheduler,
      with: ({ seen }) =>
        throwError(() =>
          seen === 0
            ? ProviderError.network(`${options.provider} request timed out: no response within ${requestTimeoutMs} ms`, {
                provider: options.provider,
              })
            : ProviderError.network(
                `${options.provider} stream stalled: no data for ${idleTimeoutMs} ms after ${seen} chunk(s)`,
                { provider: options.provider },
              ),
        ),
    }),
  );
}

function rawHttpStream(
  url: string,
  init: HttpRequestInit,
  options: HttpStreamOptions,
  scheduler: SchedulerLike,
): Observable<Uint8Array> {
  const { provider, secrets, signal } = options;
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  return new Observable<Uint8Array>((subscriber) => {
    if (signal?.aborted) {
      subscriber.error(ProviderError.cancelled(`${provider} request cancelled before it was sent`, { provider }));
      return;
    }
    const controller = new AbortController();
    let settled = false;
    const onAbort = () => {
      controller.abort();
      fail(ProviderError.cancelled(`${provider} request cancelled`, { provider }));
    };
    const fail = (error: ProviderError) => {
      if (settled) return;
      settled = true;
      subscriber.error(error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });

    const run = async () => {
      const response = await send(url, init, controller.signal, options);
      if (response.status < 200 || response.status >= 300) {
        const body = await readLimited(response.body, MAX_ERROR_BODY_BYTES);
        fail(
          classifyHttpError({
            status: response.status,
            headers: response.headers,
            body,
            provider,
            secrets: secrets ?? [],
            now: scheduler.now(),
          }),
        );
        return;
      }
      let received = 0;
      for await (const chunk of response.body) {
        if (settled || subscriber.closed) return;
        received += chunk.byteLength;
        if (received > maxBytes) {
          controller.abort();
          fail(responseTooLarge(provider, maxBytes));
          return;
        }
        subscriber.next(chunk);
      }
      if (!settled) {
        settled = true;
        subscriber.complete();
      }
    };
    run().catch((error: unknown) => {
      if (settled || subscriber.closed) return;
      fail(classifyNetworkError(error, provider, secrets));
    });

    return () => {
      signal?.removeEventListener('abort', onAbort);
      if (!settled) {
        settled = true;
        controller.abort();
      }
    };
  });
}

/**
 * The error of a response body over `maxResponseBytes`: kind `other`, so it is not retried (the
 * same endpoint would send the same body again).
 */
export function responseTooLarge(provider: string, maxBytes: number): ProviderError {
  return ProviderError.other(
    `${provider} sent a response body over the ${maxBytes}-byte limit (maxResponseBytes): the request was aborted`,
    { provider },
  );
}

async function readLimited(body: AsyncIterable<unknown> & { destroy?: () => void }, limit: number): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  for await (const chunk of body) {
    const buf = chunk as Uint8Array;
    bytes += buf.byteLength;
    text += decoder.decode(buf, { stream: true });
    if (bytes >= limit) {
      body.destroy?.();
      break;
    }
  }
  return text + decoder.decode();
}

/** Builds `base + path`, tolerating a trailing slash on the base. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}
