import { animationFrameScheduler, asyncScheduler, type MonoTypeOperatorFunction, Observable, type SchedulerLike } from 'rxjs';

/** `animationFrameScheduler` where there are animation frames (browsers), else `asyncScheduler` (Node, workers). */
const frameScheduler = (): SchedulerLike => (typeof (globalThis as { requestAnimationFrame?: unknown }).requestAnimationFrame === 'function' ? animationFrameScheduler : asyncScheduler);

/**
 * Coalesces values per animation frame: a burst between two frames becomes its last value,
 * emitted on the next frame. The final value is never dropped: when the source completes with
 * a value still waiting, it is emitted at once, then the completion. Errors pass through
 * immediately (after the waiting value). Use it after {@link transcript} so a UI renders at
 * most once per frame however fast the deltas come.
 *
 * `scheduler` defaults to `animationFrameScheduler` in browsers and to `asyncScheduler` where
 * there are no animation frames (Node, workers); tests pass a TestScheduler.
 *
 * ```
 * source:           -abc-------d-ef-----|
 * latestPerFrame(): -----c---------f----|     (frameMs 4: a frame 4 after the first waiting value)
 * ```
 *
 * @example
 * agent.events$.pipe(transcript(), latestPerFrame()).subscribe(render);
 */
export function latestPerFrame<T>(scheduler?: SchedulerLike, frameMs = 0): MonoTypeOperatorFunction<T> {
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
          frame ??= (scheduler ?? frameScheduler()).schedule(flush, frameMs);
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
