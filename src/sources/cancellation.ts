import { EMPTY, Observable } from 'rxjs';

/** Emits once (then completes) when `signal` aborts; immediately if it already has. Never emits without a signal. */
export function fromAbortSignal(signal: AbortSignal | undefined): Observable<void> {
  if (!signal) return EMPTY.pipe(neverComplete());
  return new Observable<void>((subscriber) => {
    const onAbort = (): void => {
      subscriber.next();
      subscriber.complete();
    };
    if (signal.aborted) {
      onAbort();
      return undefined;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    return () => signal.removeEventListener('abort', onAbort);
  });
}

function neverComplete<T>() {
  return (_source: Observable<T>): Observable<T> => new Observable<T>(() => undefined);
}

/** An AbortController that also aborts when `parent` does; `dispose` unlinks it. */
export function linkedAbortController(parent: AbortSignal | undefined): { controller: AbortController; dispose(): void } {
  const controller = new AbortController();
  if (!parent) return { controller, dispose: () => undefined };
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { controller, dispose: () => undefined };
  }
  const onAbort = (): void => controller.abort(parent.reason);
  parent.addEventListener('abort', onAbort, { once: true });
  return { controller, dispose: () => parent.removeEventListener('abort', onAbort) };
}
