import { asyncScheduler, type MonoTypeOperatorFunction, Observable, type SchedulerLike } from 'rxjs';

/**
 * Interleaves `heartbeat` whenever the source has been silent for `idleMs`: the timer restarts
 * on every value, so a busy stream carries no heartbeats at all.
 *
 * ```
 * source:                 -a------b----|
 * withHeartbeats(3, 'h'): -a--h--hb--h-|
 * ```
 *
 * @example
 * run$.pipe(toSseFrames(), withHeartbeats(15_000, HEARTBEAT_FRAME)).subscribe((frame) => res.write(frame));
 */
export function withHeartbeats<T>(idleMs: number, heartbeat: T, scheduler: SchedulerLike = asyncScheduler): MonoTypeOperatorFunction<T> {
  if (!(idleMs > 0)) throw new RangeError(`withHeartbeats: idleMs must be a positive number of ms, got ${idleMs}`);
  return (source) =>
    new Observable<T>((subscriber) => {
      let timer: { unsubscribe(): void } | undefined;
      const arm = () => {
        timer?.unsubscribe();
        timer = scheduler.schedule(function beat() {
          subscriber.next(heartbeat);
          this.schedule(undefined, idleMs);
        }, idleMs);
      };
      arm();
      const inner = source.subscribe({
        next: (value) => {
          subscriber.next(value);
          arm();
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
      return () => {
        timer?.unsubscribe();
        inner.unsubscribe();
      };
    });
}
