import { defer, type MonoTypeOperatorFunction, tap } from 'rxjs';

/**
 * Calls `undo` when the source fails before emitting anything (a run refused before it started,
 * e.g. `InvalidContinue`), then lets the error through unchanged.
 *
 * ```
 * source: ---#        ---a---#
 * result: ---#        ---a---#
 * undo:      ^ called    (not called: the run had started)
 * ```
 *
 * @example
 * run$.pipe(undoIfUnstarted(() => releaseLoopId(loopId)));
 */
export function undoIfUnstarted<T>(undo: () => void): MonoTypeOperatorFunction<T> {
  return (source) =>
    defer(() => {
      let started = false;
      return source.pipe(
        tap({
          next: () => {
            started = true;
          },
          error: () => {
            if (!started) undo();
          },
        }),
      );
    });
}
