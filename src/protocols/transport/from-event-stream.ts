import { asyncScheduler, Observable, type SchedulerLike } from 'rxjs';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { AgentEvent, AgentEventType } from '../../types/events.js';
import { EventStreamError, responseErrorText, TRANSPORT_EVENTS, type TransportErrorData } from './wire.js';
import { createEventRebuilder } from './rebuild-events.js';

export interface FromEventStreamOptions {
  /** The `fetch` to connect with (default the global one). */
  fetch?: typeof globalThis.fetch;
  /** Extra request headers (auth). */
  headers?: Record<string, string>;
  /** Wait before reconnecting after a dropped connection, ms (default 500; a server `retry:` overrides it). */
  retryDelayMs?: number;
  /** Reconnects in a row that bring no new event before giving up (default 5). */
  maxReconnects?: number;
  /** Resume after this event id on the first connection too (a page reload that kept it). */
  lastEventId?: string;
  /** Time source of the reconnect delay (default `asyncScheduler`). */
  scheduler?: SchedulerLike;
  /**
   * Most bytes the server may send between two events (one SSE line or frame) before the stream
   * fails with `EventStreamError('TooLarge')` and the connection is closed. Default 8 MiB.
   */
  maxEventBytes?: number;
  /**
   * Most bytes of the whole stream, over every reconnect, same failure: what the rebuilt run may
   * hold. Default 256 MiB; raise it for longer runs.
   */
  maxResponseBytes?: number;
  /**
   * Called with each event whose `type` this version of phi-rx does not know (a newer server),
   * which is not emitted: the stream stays an `Observable<AgentEvent>` a UI can switch over
   * exhaustively, and stays open. Default: dropped silently.
   */
  onUnknownEvent?: (event: UnknownWireEvent) => void;
}

/** An event from the wire whose `type` is not an {@link AgentEventType} this client knows. */
export interface UnknownWireEvent {
  readonly type: string;
  /** The SSE `id:` of its frame, if any. */
  readonly id: string | undefined;
  /** The frame's JSON data as sent (an object with a string `type`). */
  readonly data: Readonly<Record<string, unknown>>;
}

/** Every event type this client knows: a key missing here is a compile error. */
const KNOWN_EVENT_TYPES: Readonly<Record<AgentEventType, true>> = {
  AgentStart: true,
  AgentEnd: true,
  TurnStart: true,
  TurnEnd: true,
  MessageStart: true,
  MessageUpdate: true,
  MessageReset: true,
  MessageEnd: true,
  ToolExecutionStart: true,
  ToolExecutionUpdate: true,
  ToolExecutionEnd: true,
  ProgressMessage: true,
  InputRejected: true,
  ParallelLoopStart: true,
  ParallelLoopEnd: true,
  CompactionStart: true,
  CompactionEnd: true,
  RetryScheduled: true,
  ModelFallback: true,
  GuardrailTripped: true,
  HookError: true,
  ToolApprovalRequested: true,
  ToolApprovalResolved: true,
  Handoff: true,
};
const isKnownType = (type: string): type is AgentEventType => Object.prototype.hasOwnProperty.call(KNOWN_EVENT_TYPES, type);

/** Default {@link FromEventStreamOptions.maxEventBytes}: 8 MiB. */
export const DEFAULT_STREAM_MAX_EVENT_BYTES = 8 * 1024 * 1024;
/** Default {@link FromEventStreamOptions.maxResponseBytes}: 256 MiB. */
export const DEFAULT_STREAM_MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

/**
 * A cold `Observable<AgentEvent>` of a run served as Server-Sent Events (see
 * `phi-rx/transport/node`), for browsers and Node alike. Each subscription connects; partial
 * messages are rebuilt from the `MessageUpdate` deltas (immutable snapshots); a dropped
 * connection is reopened with `Last-Event-ID`, so the events continue with no gap and no
 * duplicate; it completes on the run's `AgentEnd` (or the server's end of run), fails with an
 * {@link EventStreamError} on a `phi-rx:error` frame (a resume gap, a failed run), a non-2xx
 * response, too many fruitless reconnects or a server sending more than `maxEventBytes` between
 * two events or `maxResponseBytes` in all (`TooLarge`, the connection closed), and unsubscribing
 * closes the connection. Forward compatible: an event type this version does not know (a newer
 * server) is not emitted but handed to `onUnknownEvent`, and the stream goes on.
 *
 * ```
 * wire:            --A--u--u-X(dropped)   ...reconnect, Last-Event-ID: 3...  --u--m--Z
 * fromEventStream: --A--u--u------------------------------------------------ --u--m--Z|
 * ```
 *
 * @example
 * fromEventStream(`/runs/${runId}/events`, { onUnknownEvent: (e) => console.debug('newer server event', e.type) })
 *   .pipe(transcript(), latestPerFrame())
 *   .subscribe(render);
 */
export function fromEventStream(source: string | URL | Response, options: FromEventStreamOptions = {}): Observable<AgentEvent> {
  return new Observable<AgentEvent>((subscriber) => {
    const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    const scheduler = options.scheduler ?? asyncScheduler;
    const maxReconnects = options.maxReconnects ?? 5;
    const maxEventBytes = options.maxEventBytes ?? DEFAULT_STREAM_MAX_EVENT_BYTES;
    const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_STREAM_MAX_RESPONSE_BYTES;
    let received = 0;
    const url = source instanceof Response ? source.url : String(source);
    const rebuild = createEventRebuilder();
    let lastEventId = options.lastEventId;
    let retryDelayMs = options.retryDelayMs ?? 500;
    let fruitless = 0;
    let rootLoopId: string | undefined;
    let controller: AbortController | undefined;
    let pending: { unsubscribe(): void } | undefined;
    let firstResponse = source instanceof Response ? source : undefined;

    const onMessage = (message: EventSourceMessage): boolean => {
      if (message.id !== undefined) lastEventId = message.id;
      if (message.event === TRANSPORT_EVENTS.end) {
        subscriber.complete();
        return true;
      }
      let data: unknown;
      try {
        data = JSON.parse(message.data);
      } catch (e) {
        subscriber.error(new EventStreamError('BadFrame', `event stream ${url}: event ${message.id ?? '?'} (${message.event ?? 'message'}) has malformed JSON data: ${(e as Error).message}`));
        return true;
      }
      if (message.event === TRANSPORT_EVENTS.error) {
        const info = data as TransportErrorData;
        subscriber.error(new EventStreamError(info.code, `event stream ${url}: ${info.message}`));
        return true;
      }
      fruitless = 0;
      const type = typeof data === 'object' && data !== null ? (data as { type?: unknown }).type : undefined;
      if (typeof type !== 'string') {
        subscriber.error(new EventStreamError('BadFrame', `event stream ${url}: event ${message.id ?? '?'} (${message.event ?? 'message'}) has no string "type"`));
        return true;
      }
      if (!isKnownType(type)) {
        options.onUnknownEvent?.({ type, id: message.id, data: data as Record<string, unknown> });
        return false;
      }
      let event: AgentEvent;
      try {
        event = rebuild(data as never);
      } catch (e) {
        subscriber.error(new EventStreamError('BadFrame', `event stream ${url}: event ${message.id ?? '?'} (${message.event ?? 'message'}): ${(e as Error).message}`, { cause: e }));
        return true;
      }
      if (event.type === 'AgentStart' && rootLoopId === undefined) rootLoopId = event.loopId;
      subscriber.next(event);
      if (event.type === 'AgentEnd' && (rootLoopId === undefined || event.loopId === rootLoopId)) {
        subscriber.complete();
        return true;
      }
      return false;
    };

    const connect = async (): Promise<void> => {
      controller = new AbortController();
      const response =
        firstResponse ??
        (await fetchImpl(url, {
          headers: { accept: 'text/event-stream', ...options.headers, ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }) },
          signal: controller.signal,
        }));
      firstResponse = undefined;
      if (!response.ok) {
        const message = await responseErrorText(response);
        throw new EventStreamError('Http', `event stream ${url}: HTTP ${response.status}${message ? `: ${message}` : ''}`);
      }
      if (!response.body) throw new EventStreamError('Http', `event stream ${url}: the response has no body`);
      let done = false;
      let undecoded = 0; // bytes since the parser last completed an event or a comment
      const parser = createParser({
        onEvent: (message) => {
          undecoded = 0;
          if (!done) done = onMessage(message);
        },
        onComment: () => {
          undecoded = 0;
        },
        onRetry: (ms) => {
          retryDelayMs = ms;
        },
      });
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      try {
        while (!done && !subscriber.closed) {
          const chunk = await reader.read();
          if (chunk.done) break;
          received += chunk.value.byteLength;
          if (received > maxResponseBytes) throw tooLarge(`over ${maxResponseBytes} bytes in all (maxResponseBytes)`);
          undecoded += chunk.value.byteLength;
          parser.feed(decoder.decode(chunk.value, { stream: true }));
          if (undecoded > maxEventBytes) throw tooLarge(`over ${maxEventBytes} bytes without completing an event (maxEventBytes)`);
        }
      } catch (error) {
        // Closes the connection (a Response passed in is not ours to abort: its body is cancelled).
        controller.abort();
        void reader.cancel().catch(() => undefined);
        throw error;
      } finally {
        if (done || subscriber.closed) controller.abort();
        reader.releaseLock?.();
      }
      if (!done && !subscriber.closed) throw new EventStreamError('Disconnected', `event stream ${url}: the connection closed before the run ended`);
    };

    const tooLarge = (what: string): EventStreamError => new EventStreamError('TooLarge', `event stream ${url}: the server sent ${what}; the connection was closed`);

    const attempt = (): void => {
      connect().catch((error: unknown) => {
        if (subscriber.closed) return;
        if (error instanceof EventStreamError && error.code !== 'Disconnected') return subscriber.error(error);
        if (url === '') return subscriber.error(new EventStreamError('Disconnected', 'event stream: the connection dropped and the Response has no url to reconnect to', { cause: error }));
        if (++fruitless > maxReconnects) {
          return subscriber.error(new EventStreamError('Disconnected', `event stream ${url}: gave up after ${maxReconnects} reconnects with no new event`, { cause: error }));
        }
        pending = scheduler.schedule(attempt, retryDelayMs);
      });
    };
    attempt();

    return () => {
      pending?.unsubscribe();
      controller?.abort();
    };
  });
}
