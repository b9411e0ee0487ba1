import { Observable } from 'rxjs';
import { removeOne } from '../util/remove-one.js';

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
  private view: BroadcastView<T> | undefined;

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
   * The receiving side alone, for an owner to hand out (as `Subject.asObservable()` does): an
   * Observable with `listen` and without `next`, so that no one it is handed to can push into it,
   * cast or not. `listenTo` takes it without a Subscriber, as it takes the Broadcast.
   */
  asObservable(): BroadcastView<T> {
    return (this.view ??= new BroadcastView(this));
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

/** What {@link Broadcast.asObservable} hands out: the Broadcast's values, its `listen`, and no `next`. */
export class BroadcastView<T> extends Observable<T> {
  readonly #source: Broadcast<T>;

  constructor(source: Broadcast<T>) {
    super((subscriber) => source.listen((value) => subscriber.next(value)));
    this.#source = source;
  }

  /** Calls `listener` with every value from now on, as {@link Broadcast.listen} does. */
  listen(listener: (value: T) => void): () => void {
    return this.#source.listen(listener);
  }
}

/**
 * Calls `listener` with each value of `source` until the returned function is called: the
 * `listen` of a {@link Broadcast} or of its {@link BroadcastView}, any other Observable subscribed.
 */
export function listenTo<T>(source: Observable<T>, listener: (value: T) => void): () => void {
  if (source instanceof Broadcast || source instanceof BroadcastView) return (source as Broadcast<T> | BroadcastView<T>).listen(listener);
  const subscription = source.subscribe(listener);
  return () => subscription.unsubscribe();
}
