import { type Observable, type Observer, Subscription } from 'rxjs';

/**
 * Subscribes `source` with `observer` through no subscriber of RxJS's own: what a pass-through
 * operator (a recorder, a tracker) pays per value is one call, not three. `Observable.subscribe`
 * wraps a plain observer in a SafeSubscriber (whose `next` calls `_next`, which calls the
 * observer's); a {@link Relay} is a `Subscription` with `next`, `error` and `complete`, which RxJS
 * takes as the subscriber it is. It keeps a subscriber's contract: nothing after `error` or
 * `complete` or once unsubscribed, and it unsubscribes (tearing the source down) when it ends.
 *
 * `observer` must not throw (a SafeSubscriber would report it as unhandled; a relay lets it
 * through to the source). Returns the subscription (the relay itself): unsubscribing it cancels
 * the source.
 */
export function relay<T>(source: Observable<T>, observer: Observer<T>): Subscription {
  return source.subscribe(new Relay(observer));
}

/** The subscriber {@link relay} hands a source. */
class Relay<T> extends Subscription implements Observer<T> {
  private stopped = false;

  constructor(private readonly observer: Observer<T>) {
    super();
  }

  next(value: T): void {
    if (!this.stopped) this.observer.next(value);
  }

  error(err: unknown): void {
    if (this.stopped) return;
    this.stopped = true;
    try {
      this.observer.error(err);
    } finally {
      this.unsubscribe();
    }
  }

  complete(): void {
    if (this.stopped) return;
    this.stopped = true;
    try {
      this.observer.complete();
    } finally {
      this.unsubscribe();
    }
  }

  override unsubscribe(): void {
    this.stopped = true;
    super.unsubscribe();
  }
}
