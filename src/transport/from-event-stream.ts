import { asyncScheduler, Observable, type SchedulerLike } from 'rxjs';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { AgentEvent } from '../types/events.js';
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
}

/**
 * A cold `Observable<AgentEvent>` of a run served as Server-Sent Events (see
 * `phi-rx/transport/node`), for browsers and Node alike. Each subscription connects; partial
 * messages are rebuilt from the `MessageUpdate` deltas (immutable snapshots); a dropped
 * connection is reopened with `Last-Event-ID`, so the events continue with no gap and no
 * duplicate; it completes on the run's `AgentEnd` (or the server's end of run), fails with an
 * {@link EventStreamError} on a `phi-rx:error` frame (a resume gap, a failed run), a non-2xx
 * response or too many fruitless reconnects, and unsubscribing closes the connection.
 *
 * ```
 * wire:            --A--u--u-X(dropped)   ...reconnect, Last-Event-ID: 3...  --u--m--Z
 * fromEventStream: --A--u--u------------------------------------------------ --u--m--Z|
 * ```
 *
 * @example
 * fromEventStream(`/runs/${runId}/events`).pipe(transcript(), latestPerFrame()).subscribe(render);
 */
export function fromEventStream(source: string | URL | Response, options: FromEventStreamOptions = {}): Observable<AgentEvent> {
  return new Observable<AgentEvent>((subscriber) => {
    const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    const scheduler = options.scheduler ?? asyncScheduler;
    const maxReconnects = options.maxReconnects ?? 5;
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
      const parser = createParser({
        onEvent: (message) => {
          if (!done) done = onMessage(message);
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
          parser.feed(decoder.decode(chunk.value, { stream: true }));
        }
      } finally {
        if (done || subscriber.closed) controller.abort();
        reader.releaseLock?.();
      }
      if (!done && !subscriber.closed) throw new EventStreamError('Disconnected', `event stream ${url}: the connection closed before the run ended`);
    };

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
