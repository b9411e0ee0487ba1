import { Observable, asyncScheduler, defer } from 'rxjs';
import type { Dispatcher } from 'undici';
import type { Message, ToolResultMessage, AssistantMessage } from '../../types/message.js';
import type { ModelConfig, ProviderOptions, StreamEvent, StreamRequest } from '../../types/provider.js';
import { ProviderError } from '../../types/errors.js';
import { sseStream } from '../http/sse.js';
import type { SseEvent } from '../http/sse.js';
import { AssistantMessageBuilder } from './message-builder.js';

/**
 * Plumbing shared by the SSE-based providers: how an SSE body becomes StreamEvents, where the
 * API key comes from, and how a conversation recorded with one provider is made acceptable to
 * another. Each protocol file keeps only what is specific to its wire format.
 */

/** Transport settings of a provider instance (`createAnthropicProvider(options)` etc.). */
export interface ProviderHttpOptions {
  /** Dispatcher for this provider's requests; default the shared one (`getHttpDispatcher()`). */
  dispatcher?: Dispatcher;
  /** No body bytes for this long mid-stream fails with a retryable network error. Default 60 s. */
  idleTimeoutMs?: number;
  /** No body bytes this long after sending fails with a retryable network error. Default 120 s. */
  requestTimeoutMs?: number;
  /** Environment read for API keys; default `process.env`. */
  env?: Record<string, string | undefined>;
}

/**
 * Turns decoded SSE events into StreamEvents for one response. `onEvent` returns the events one
 * SSE event produced and includes the final `done` when the protocol's terminal event arrives;
 * `onEnd` runs when the body ends without one and either returns the final events or throws.
 */
export interface SseReader {
  onEvent(event: SseEvent): StreamEvent[];
  onEnd(): StreamEvent[];
}

export interface SseProviderCall {
  request: StreamRequest;
  options: ProviderOptions;
  http: ProviderHttpOptions;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  /** Values never to show in an error (the API key). */
  secrets: string[];
  reader: (builder: AssistantMessageBuilder) => SseReader;
}

/**
 * POSTs `body` as JSON and reads the SSE response through `reader`. Emits `start` once the
 * response streams, then the reader's deltas, then exactly one `done`. Cold; unsubscribing
 * aborts the request.
 *
 * After `done` the message is whole: later events are ignored, and a transport error while the
 * rest of the body drains no longer fails the stream. Completion waits for the body's end
 * instead of unsubscribing at `done`, so the connection returns to the keep-alive pool rather
 * than being destroyed by an abort.
 *
 * ```
 * sse:     --a--b--stop--|      --a--b--|                 --a--X
 * output:  --(start a)--b--(c done)--|   --(start a)--b--#early   --(start a)--#X
 * ```
 */
export function sseProviderStream(call: SseProviderCall): Observable<StreamEvent> {
  const { request, options, http } = call;
  const scheduler = options.scheduler ?? asyncScheduler;
  return defer(() => {
    const builder = new AssistantMessageBuilder(request.model.id, request.model.provider, scheduler.now());
    const reader = call.reader(builder);
    const events$ = sseStream(
      call.url,
      { method: 'POST', headers: call.headers, body: JSON.stringify(call.body) },
      {
        provider: request.model.provider,
        secrets: call.secrets,
        signal: options.signal,
        scheduler,
        idleTimeoutMs: http.idleTimeoutMs,
        requestTimeoutMs: http.requestTimeoutMs,
        dispatcher: http.dispatcher,
      },
    );
    return new Observable<StreamEvent>((subscriber) => {
      let started = false;
      let done = false;
      const emit = (events: StreamEvent[]) => {
        for (const event of events) {
          if (done) return;
          if (!started) {
            started = true;
            subscriber.next(builder.start());
          }
          if (event.type === 'done') done = true;
          subscriber.next(event);
        }
      };
      // Reader failures (error events, malformed chunks) end the stream as errors.
      const attempt = (produce: () => StreamEvent[]): boolean => {
        try {
          emit(produce());
          return true;
        } catch (error) {
          subscriber.error(error);
          return false;
        }
      };
      return events$.subscribe({
        next: (event) => {
          if (!done) attempt(() => reader.onEvent(event));
        },
        error: (error: unknown) => (done ? subscriber.complete() : subscriber.error(error)),
        complete: () => {
          if (!done && !attempt(() => reader.onEnd())) return;
          if (done) subscriber.complete();
          else subscriber.error(ProviderError.other(`${request.model.provider} stream produced no final message`, { provider: request.model.provider }));
        },
      });
    });
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
  const env = http.env ?? process.env;
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

/** True when an assistant message was produced by another provider than `target`. */
export function fromOtherProvider(message: AssistantMessage, target: ModelConfig): boolean {
  return message.provider !== target.provider;
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

/** Headers of the model config merged over the protocol's own (the config wins). */
export function withModelHeaders(base: Record<string, string>, model: ModelConfig): Record<string, string> {
  return { ...base, ...model.headers };
}
