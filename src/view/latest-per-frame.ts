import { animationFrameScheduler, type MonoTypeOperatorFunction, Observable, type SchedulerLike } from 'rxjs';

/**
 * Coalesces values per animation frame: a burst between two frames becomes its last value,
 * emitted on the next frame. The final value is never dropped: when the source completes with
 * a value still waiting, it is emitted at once, then the completion. Errors pass through
 * immediately (after the waiting value). Use it after {@link transcript} so a UI renders at
 * most once per frame however fast the deltas come.
 *
 * `scheduler` defaults to `animationFrameScheduler` (browsers; elsewhere RxJS falls back to
 * timers); tests pass a TestScheduler or `asyncScheduler`.
 *
 * ```
 * source:           -abc-------d-ef-----|
 * latestPerFrame(): -----c---------f----|     (frameMs 4: a frame 4 after the first waiting value)
 * ```
 *
 * @example
 * agent.events$.pipe(transcript(), latestPerFrame()).subscribe(render);
 */
export function latestPerFrame<T>(scheduler: SchedulerLike = animationFrameScheduler, frameMs = 0): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      let waiting: { value: T } | undefined;
      let frame: { unsubscribe(): void } | undefined;
      const flush = () => {
        frame = undefined;
        if (waiting) {
          const { value } = waiting;
          waiting = undefined;
          subscriber.next(value);
        }
      };
      const inner = source.subscribe({
        next: (value) => {
          waiting = { value };
          frame ??= scheduler.schedule(flush, frameMs);
        },
        error: (error: unknown) => {
          frame?.unsubscribe();
          flush();
          subscriber.error(error);
        },
        complete: () => {
          frame?.unsubscribe();
          flush();
          subscriber.complete();
        },
      });
      return () => {
        inner.unsubscribe();
        frame?.unsubscribe();
      };
    });
}
