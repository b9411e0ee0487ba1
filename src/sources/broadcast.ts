import { Observable } from 'rxjs';
import { removeOne } from './remove-one.js';

/**
 * A hot Observable that is its own source: `next(value)` hands the value to everyone listening
 * at that moment — subscribers, as a `Subject`'s would get it, and plain callbacks registered
 * with `listen` (no Subscriber each: what the loop's own watchers use, once per dispatch or tool
 * call). It never completes or errors. Nothing is kept until the first listener comes, so an
 * object that owns one and is never watched (an agent's steering queue, its call cancellations)
 * pays one object for it. A subscriber that throws is reported by RxJS, as a Subject's; a plain
 * listener that throws throws to the caller of `next` (the listeners after it are not called).
 *
 * @example
 * const cancels = new Broadcast<ToolCallCancel>();
 * const stop = listenTo(cancels, (c) => console.log('cancel', c.toolCallId));
 * cancels.next({ toolCallId: 'call_1' });
 * stop();
 */
export class Broadcast<T> extends Observable<T> {
  /** In the order they came; changed in place (see {@link removeOne}). */
  private listeners: Array<(value: T) => void> | undefined;

  constructor() {
    super((subscriber) => this.listen((value) => subscriber.next(value)));
  }

  /** Calls `listener` with every value from now on; the returned function stops it (a second call does nothing). */
  listen(listener: (value: T) => void): () => void {
    const listeners = (this.listeners ??= []);
    const own = (value: T): void => listener(value); // its own entry, even for a listener registered twice
    listeners.push(own);
    return () => {
      removeOne(listeners, own);
    };
  }

  /**
   * Hands `value` to everyone listening now, as a Subject does: one who starts listening meanwhile
   * gets the next value, one stopped meanwhile (by an earlier listener) gets nothing more.
   */
  next(value: T): void {
    const listeners = this.listeners;
    if (listeners === undefined || listeners.length === 0) return;
    if (listeners.length === 1) return listeners[0]!(value);
    for (const listener of listeners.slice()) if (listeners.includes(listener)) listener(value);
  }
}

/**
 * Calls `listener` with each value of `source` until the returned function is called: a
 * {@link Broadcast}'s `listen`, any other Observable subscribed.
 */
export function listenTo<T>(source: Observable<T>, listener: (value: T) => void): () => void {
  if (source instanceof Broadcast) return (source as Broadcast<T>).listen(listener);
  const subscription = source.subscribe(listener);
  return () => subscription.unsubscribe();
}
