import { defer, from, isObservable, Observable, type OperatorFunction, throwError } from 'rxjs';
import type { Provider, ProviderOptions, StreamEvent, StreamRequest } from '../types/provider.js';
import { ProviderError } from '../types/errors.js';

/**
 * Holds a provider stream to the contract the loop builds on, so a user's own provider, a proxy or
 * a buggy backend cannot break the message lifecycle: every event must be an object of a known
 * type, deltas must carry their partial message and a string delta, `done` must carry the final
 * assistant message. A breach fails the stream with a ProviderError (kind `other`, not retried)
 * whose message names it and the event's index, never a raw TypeError. `done` is final: the
 * stream completes there, and whatever the provider sends after it (a second `done`, more
 * deltas, an error, or nothing and never completing) is ignored. The source itself is left to
 * finish on its own after `done` (so an HTTP body is read to its end and its connection reused);
 * before `done`, unsubscribing tears it down.
 *
 * ```
 * source:  -s-t-x-d|      (x: null, or a delta without its partial message)
 * guardProviderStream()
 * output:  -s-t-#         (#: ProviderError "Provider contract breach: event 2 is null")
 *
 * source:  -s-t-d-d-t-    (a second done, a delta after it, no completion)
 * guardProviderStream()
 * output:  -s-t-(d|)      (completes on the first done)
 * ```
 *
 * @example
 * myProvider(request, options).pipe(guardProviderStream(), toMessageEvents({ loopId, now }));
 */
export function guardProviderStream(): OperatorFunction<unknown, StreamEvent> {
  return (source) =>
    new Observable<StreamEvent>((subscriber) => {
      const check = streamGuard();
      let done = false;
      const subscription = source.subscribe({
        next: (event) => {
          if (done) return;
          const breach = check(event);
          if (breach !== undefined) {
            subscriber.error(breach);
            return;
          }
          if ((event as StreamEvent).type === 'done') done = true;
          subscriber.next(event as StreamEvent);
          if (done) subscriber.complete();
        },
        error: (e: unknown) => {
          if (!done) subscriber.error(e);
        },
        complete: () => subscriber.complete(),
      });
      // After `done` the source may drain on its own (an HTTP body returns its connection to the
      // keep-alive pool when read to the end); before it, unsubscribing tears the call down.
      return () => {
        if (!done) subscription.unsubscribe();
      };
    });
}

/**
 * The check of {@link guardProviderStream} over one stream, as a function of each event in turn:
 * the ProviderError naming the breach (with the event's index), or `undefined` for a sound event.
 * The model-call stage calls it directly (no subscriber hop per delta).
 */
export function streamGuard(): (event: unknown) => ProviderError | undefined {
  let index = 0;
  return (event) => streamBreach(event, index++);
}

/** The check of {@link streamGuard} for the event at `index` of its stream (the model-call stage counts them itself). */
export function streamBreach(event: unknown, index: number): ProviderError | undefined {
  const breach = breachOf(event, index);
  return breach === undefined ? undefined : contractBreach(breach);
}

/**
 * Calls a provider and guards what it returns: a throw, or a return value that is not an
 * Observable (a Promise, an async iterable, `undefined` …), becomes a ProviderError naming the
 * breach; an Observable from another library (anything with `subscribe`) is adopted.
 *
 * @example
 * callProvider(provider, request, options).pipe(toMessageEvents({ loopId, now }));
 */
export function callProvider(provider: Provider, request: StreamRequest, options: ProviderOptions): Observable<StreamEvent> {
  return providerCall(provider, request, options).pipe(guardProviderStream());
}

/**
 * {@link callProvider} without the guard on the events: what the provider returned, adopted, or a
 * ProviderError for a throw or a return value that is not an Observable. For a caller that checks
 * each event itself with {@link streamGuard}.
 */
export function providerCall(provider: Provider, request: StreamRequest, options: ProviderOptions): Observable<unknown> {
  return defer(() => {
    const result: unknown = provider(request, options);
    if (isObservable(result)) return result;
    if (result !== null && typeof result === 'object' && typeof (result as { subscribe?: unknown }).subscribe === 'function') {
      return from(result as { subscribe: Observable<unknown>['subscribe'] } as never);
    }
    const what = result instanceof Promise ? 'a Promise' : result === null ? 'null' : typeof result === 'object' ? 'an object without subscribe' : typeof result;
    return throwError(() => contractBreach(`the provider returned ${what}, not an Observable of stream events`));
  });
}

function contractBreach(detail: string): ProviderError {
  return new ProviderError('other', `Provider contract breach: ${detail}`);
}

function breachOf(event: unknown, index: number): string | undefined {
  if (event === null || event === undefined) return `event ${index} is ${String(event)}`;
  if (typeof event !== 'object') return `event ${index} is ${typeof event} ${JSON.stringify(event)}, not a stream event object`;
  const e = event as Record<string, unknown>;
  const type = e.type;
  if (type === 'done') return isAssistant(e.message) ? undefined : `event ${index} (done) has no final assistant message`;
  if (type === 'start') return isAssistant(e.partial) ? undefined : `event ${index} (start) has no partial assistant message`;
  if (type === 'textDelta' || type === 'toolCallDelta' || type === 'thinkingDelta' || type === 'toolCallStart') {
    // The checks in the order a breach is named; the message is only built for a breach.
    const wrong = !isAssistant(e.partial)
      ? 'has no partial assistant message'
      : typeof e.contentIndex !== 'number'
        ? 'has no numeric contentIndex'
        : type === 'toolCallStart'
          ? typeof e.id === 'string' && typeof e.name === 'string' ? undefined : 'needs a string id and name'
          : typeof e.delta === 'string' ? undefined : 'has a delta that is not a string';
    return wrong === undefined ? undefined : `event ${index} (${type}) ${wrong}`;
  }
  return `event ${index} has unknown type ${JSON.stringify(type) ?? 'undefined'}`;
}

function isAssistant(m: unknown): boolean {
  return m !== null && typeof m === 'object' && (m as { role?: unknown }).role === 'assistant' && Array.isArray((m as { content?: unknown }).content);
}
