import { EMPTY, Observable } from 'rxjs';
import { removeOne } from '../util/remove-one.js';

/** Emits once (then completes) when `signal` aborts; immediately if it already has. Never emits without a signal. */
export function fromAbortSignal(signal: AbortSignal | undefined): Observable<void> {
  if (!signal) return EMPTY.pipe(neverComplete());
  return new Observable<void>((subscriber) => {
    if (signal.aborted) {
      subscriber.next();
      subscriber.complete();
      return undefined;
    }
    return onAbort(signal, () => {
      subscriber.next();
      subscriber.complete();
    });
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
  const dispose = onAbort(parent, () => controller.abort(parent.reason));
  return { controller, dispose };
}

/** The callbacks waiting on each signal, behind one 'abort' listener per signal. */
const waiting = new WeakMap<AbortSignal, Array<() => void>>();

/**
 * Calls `callback` when `signal` aborts (it must not have yet); the returned function stops
 * waiting. Every model call and tool run of a run waits on the run's signal, and adding and
 * removing an EventTarget listener costs microseconds each: one listener per signal is shared,
 * and callbacks are called in the order they started waiting. They are kept in an array changed in
 * place ({@link removeOne}): a `Set` makes a new table as it shrinks, twice per tool call.
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  const callbacks = signal === lastSignal ? lastCallbacks! : callbacksOf(signal);
  callbacks.push(callback);
  return () => {
    removeOne(callbacks, callback);
  };
}

// The signal asked about last, and its callbacks: a run's tool calls all ask about the same one.
let lastSignal: AbortSignal | undefined;
let lastCallbacks: Array<() => void> | undefined;

function callbacksOf(signal: AbortSignal): Array<() => void> {
  let callbacks = waiting.get(signal);
  if (!callbacks) {
    const list: Array<() => void> = [];
    callbacks = list;
    waiting.set(signal, list);
    signal.addEventListener(
      'abort',
      () => {
        waiting.delete(signal);
        if (lastSignal === signal) lastSignal = lastCallbacks = undefined;
        for (const call of list.slice()) call();
      },
      { once: true },
    );
  }
  lastSignal = signal;
  lastCallbacks = callbacks;
  return callbacks;
}
