import { runtimeEnv } from './runtime-env.js';
import { Observable, asyncScheduler, defer, type OperatorFunction } from 'rxjs';
import type { Dispatcher } from 'undici';
import type { ImageContent } from '../types/content.js';
import type { Message, ToolResultMessage, AssistantMessage } from '../types/message.js';
import type { ModelConfig, ProviderOptions, StreamEvent, StreamRequest } from '../types/provider.js';
import { ProviderError } from '../types/errors.js';
import { boundedDecode } from '../sources/http/bounded-decode.js';
import { httpStream } from '../sources/http/request.js';
import { AssistantMessageBuilder } from './message-builder.js';

/**
 * Plumbing shared by the wire protocols: the one stream runner that turns a response body into
 * StreamEvents, where the API key comes from, and how a conversation recorded with one provider
 * is made acceptable to another. Each protocol file keeps only what is specific to its wire format.
 */

/** Transport settings of a provider instance (`createAnthropicProvider(options)` etc.). */
export interface ProviderHttpOptions {
  /** Dispatcher for this provider's requests; default the shared one (`getHttpDispatcher()`). */
  dispatcher?: Dispatcher;
  /** A standard `fetch` to send with instead of undici (default: undici on Node, global `fetch` elsewhere). */
  fetch?: typeof globalThis.fetch;
  /** No body bytes for this long mid-stream fails with a retryable network error. Default 60 s. */
  idleTimeoutMs?: number;
  /** No body bytes this long after sending fails with a retryable network error. Default 120 s. */
  requestTimeoutMs?: number;
  /** Environment read for API keys; default `process.env`. */
  env?: Record<string, string | undefined>;
  /**
   * Most bytes the endpoint may send between two events (an SSE line or event, a Bedrock frame)
   * before the call fails with a non-retryable ProviderError and the socket is closed. Default 8 MiB.
   */
  maxEventBytes?: number;
  /** Most bytes of one response body, same failure. Default 256 MiB. */
  maxResponseBytes?: number;
}

/**
 * Turns a protocol's decoded wire events (SSE events, AWS event-stream messages) into
 * StreamEvents for one response. `push` may throw a ProviderError (a mid-stream error event, a
 * malformed chunk); `end` is called when the body ends before `push` produced `done`, and must
 * either produce it or throw (typically "stream ended before <terminal event>", retryable).
 */
export interface WireParser<T> {
  push(event: T, emit: (event: StreamEvent) => void): void;
  end(emit: (event: StreamEvent) => void): void;
}

/**
 * Runs a {@link WireParser} over a stream of wire events: `start` before the first event's
 * output, then the parser's events, exactly one `done`. Once `done` is out the message is whole:
 * later wire events are ignored and a transport error after it (a reset while draining a
 * trailing `[DONE]`) no longer fails the stream. Completion waits for the body's end rather than
 * unsubscribing at `done`, so the connection goes back to the keep-alive pool instead of being
 * destroyed by an abort.
 *
 * ```
 * wire:    --a--b--c--|        --a--b--|            --a--X
 * output:  --(s a)-b-(c done)| --(s a)-b-#early     --(s a)-#X
 * ```
 *
 * @example
 * sseStream(url, init, http).pipe(parseWire(builder, new MyParser(builder)))
 */
export function parseWire<T>(builder: AssistantMessageBuilder, parser: WireParser<T>): OperatorFunction<T, StreamEvent> {
  return (source) =>
    new Observable<StreamEvent>((subscriber) => {
      let started = false;
      let done = false;
      const emit = (event: StreamEvent): void => {
        if (done) return;
        if (!started) {
          started = true;
          subscriber.next(builder.start());
        }
        if (event.type === 'done') done = true;
        subscriber.next(event);
      };
      // A parser failure (an error event, a malformed chunk) is thrown here and fails the stream.
      const guarded = (step: () => void): void => {
        try {
          step();
        } catch (error) {
          subscriber.error(error);
        }
      };
      return source.subscribe({
        next: (event) => {
          if (!done && !subscriber.closed) guarded(() => parser.push(event, emit));
        },
        complete: () =>
          guarded(() => {
            if (!done) parser.end(emit);
            if (done) subscriber.complete();
            else subscriber.error(ProviderError.other(`${builder.partial.provider} stream produced no final message`, { provider: builder.partial.provider }));
          }),
        error: (error: unknown) => (done ? subscriber.complete() : subscriber.error(error)),
      });
    });
}

/** Where and how one provider call is sent. */
export interface ProviderEndpoint {
  url: string;
  headers: Record<string, string>;
  /** Provider id on errors (`openai`, `azure-openai`, ...). */
  provider: string;
  /** Values that must never appear in an error (the key). */
  secrets: readonly string[];
}

/** One provider call: the endpoint, the body, and how the response body becomes StreamEvents. */
export interface ProviderCall<T> extends ProviderEndpoint {
  /** The request body as sent; built at subscription, so the call stays cold. */
  body: () => string;
  /** Cuts the response bytes into wire events: `decodeSse()`, or Bedrock's event-stream decoder. */
  decode: OperatorFunction<Uint8Array, T>;
  /** The protocol's parser for one response; it writes into `builder`. */
  parser: (builder: AssistantMessageBuilder) => WireParser<T>;
}

/**
 * POSTs `call.body` and reads the response through `call.decode` and {@link parseWire}: `start`
 * once the response streams, then the parser's deltas, then exactly one `done`. Cold;
 * unsubscribing aborts the request. Every wire protocol runs through here, so every one is held to
 * `http.maxEventBytes` between two decoded events ({@link boundedDecode}) and `http.maxResponseBytes`
 * per body.
 *
 * ```
 * wire:    --a------b--stop--|       --a------b--|           --a------X
 * output:  --(S a)--b--done--|       --(S a)--b--#early      --(S a)--#X
 * (S = start; `early` = the parser's end() error, e.g. "stream ended before message_stop")
 * ```
 *
 * @example
 * streamProvider(request, options, { url, headers, provider: 'anthropic', secrets: [key],
 *   body: () => JSON.stringify(body), decode: decodeSse(), parser: (b) => anthropicReader(b, 'anthropic') })
 */
export function streamProvider<T>(
  request: StreamRequest,
  options: ProviderOptions,
  call: ProviderCall<T>,
  http: ProviderHttpOptions = {},
): Observable<StreamEvent> {
  return defer(() => {
    const scheduler = options.scheduler ?? asyncScheduler;
    const builder = new AssistantMessageBuilder(request.model.id, request.model.provider, scheduler.now());
    const parser = call.parser(builder);
    return httpStream(
      call.url,
      { method: 'POST', headers: call.headers, body: call.body() },
      {
        provider: call.provider,
        secrets: call.secrets,
        signal: options.signal,
        scheduler,
        idleTimeoutMs: http.idleTimeoutMs,
        requestTimeoutMs: http.requestTimeoutMs,
        maxResponseBytes: http.maxResponseBytes,
        dispatcher: http.dispatcher,
        fetch: http.fetch,
      },
    ).pipe(boundedDecode(call.decode, call.provider, http.maxEventBytes), parseWire(builder, parser));
  });
}

/** Fails a call before any request is made (no key, bad config). */
export function failFast(error: ProviderError): Observable<never> {
  return new Observable<never>((subscriber) => subscriber.error(error));
}

/**
 * The API key of a call: the per-call key (`getApiKey`), the model's own, else the environment
 * variable named by `envVar`. Undefined when none is set.
 */
export function resolveApiKey(request: StreamRequest, envVar: string | undefined, http: ProviderHttpOptions): string | undefined {
  const env = http.env ?? runtimeEnv();
  return request.apiKey ?? request.model.apiKey ?? (envVar ? env[envVar] : undefined) ?? undefined;
}

export function missingKeyError(model: ModelConfig, envVar: string | undefined): ProviderError {
  return ProviderError.auth(
    `No API key for ${model.provider} (model "${model.id}"): ${envVar ? `set ${envVar}, ` : ''}pass apiKey on the model config, or resolve one per call with getApiKey.`,
    { provider: model.provider },
  );
}

/** Max output tokens for a call: the request's, the model's, else `fallback`. */
export function maxTokensOf(request: StreamRequest, fallback?: number): number | undefined {
  return request.maxTokens ?? request.model.maxTokens ?? fallback;
}

/**
 * True when an assistant message was produced by the same provider as the model about to be
 * called, so that its thinking signatures can be echoed back; otherwise thinking travels as text.
 */
export function isOwnMessage(message: AssistantMessage, model: ModelConfig): boolean {
  return message.provider === model.provider;
}

/** Text for thinking that cannot be echoed to the target provider as thinking. */
export function thinkingAsText(thinking: string): string {
  return `<thinking>\n${thinking}\n</thinking>`;
}

/**
 * Makes a conversation safe to send: drops assistant messages that carry nothing (an aborted
 * turn), and gives every tool call that has no result a synthetic error result, because every
 * API rejects a tool call left unanswered. The input is not modified.
 */
export function repairToolPairs(messages: readonly Message[], timestamp = 0): Message[] {
  const out: Message[] = [];
  let pending: Array<{ id: string; name: string }> = [];
  const flushPending = () => {
    for (const call of pending) out.push(syntheticResult(call.id, call.name, timestamp));
    pending = [];
  };
  for (const message of messages) {
    if (message.role === 'assistant') {
      flushPending();
      if (message.content.length === 0) continue;
      out.push(message);
      pending = message.content.flatMap((c) => (c.type === 'toolCall' ? [{ id: c.id, name: c.name }] : []));
    } else if (message.role === 'toolResult') {
      pending = pending.filter((p) => p.id !== message.toolCallId);
      out.push(message);
    } else {
      flushPending();
      out.push(message);
    }
  }
  flushPending();
  return out;
}

function syntheticResult(toolCallId: string, toolName: string, timestamp: number): ToolResultMessage {
  return {
    role: 'toolResult',
    toolCallId,
    toolName,
    content: [{ type: 'text', text: 'No result was recorded for this tool call.' }],
    isError: true,
    timestamp,
  };
}

/** The text blocks of a tool result joined; images are handled by each protocol. */
export function toolResultText(message: ToolResultMessage): string {
  return message.content.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('\n');
}

/** Base64 image blocks of a tool result. */
export function toolResultImages(message: ToolResultMessage): ImageContent[] {
  return message.content.filter((c): c is ImageContent => c.type === 'image');
}

/** `undefined` fields dropped, so request bodies stay minimal and comparable. */
export function compact<T extends Record<string, unknown>>(value: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = v;
  return out as T;
}

/** Headers that carry a credential whatever their value looks like. */
const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|cookie|x-api-key|api-key|x-goog-api-key|x-amz-security-token)$/i;
/** An auth scheme before a token (`Bearer abc`): the token alone is a secret too. */
const AUTH_SCHEME = /^(?:Bearer|Basic|Token|Bot)\s+(\S.*)$/i;

/**
 * The values to redact from every error of one call: the credentials, every header value the
 * model config adds (`model.headers`: gateway keys, proxy tokens) and every credential header
 * (`authorization`, `x-api-key` …), with the token after an auth scheme on its own as well. The
 * protocol's own constant headers (`content-type`, `anthropic-version` …) are not secrets.
 *
 * @example
 * requestSecrets(headers, model, apiKey) // → [apiKey, 'gw-token-…', 'Bearer gw-token-…']
 */
export function requestSecrets(headers: Readonly<Record<string, string>>, model: ModelConfig, ...credentials: ReadonlyArray<string | undefined>): string[] {
  const own = new Set(Object.keys(model.headers ?? {}).map((name) => name.toLowerCase()));
  const out = new Set<string>();
  const add = (value: string | undefined): void => {
    if (!value) return;
    out.add(value);
    const token = AUTH_SCHEME.exec(value)?.[1];
    if (token) out.add(token);
  };
  for (const credential of credentials) add(credential);
  for (const [name, value] of Object.entries(headers)) if (own.has(name.toLowerCase()) || CREDENTIAL_HEADER.test(name)) add(value);
  return [...out];
}

/** Headers of the model config merged over the protocol's own (the config wins). */
export function withModelHeaders(base: Record<string, string>, model: ModelConfig): Record<string, string> {
  return { ...base, ...model.headers };
}
