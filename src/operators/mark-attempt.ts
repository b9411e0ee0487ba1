import { concat, of, type OperatorFunction } from 'rxjs';

/** Marks where a provider attempt begins (what `markAttempt` puts before each subscription). */
export interface AttemptMark {
  type: 'attempt';
}

const ATTEMPT: AttemptMark = { type: 'attempt' };

/**
 * Puts an {@link AttemptMark} before the source's events on every subscription, so that a retry
 * operator placed after it (which re-subscribes) lets `resumeRetry` see where each attempt begins.
 *
 * ```
 * source:  -a-b-#   (retried)   -a-b-c|
 * markAttempt() + retry
 * output:  (Ma)-b-              (Ma)-b-c|     (M: AttemptMark)
 * ```
 *
 * @example
 * provider(request, options).pipe(markAttempt(), retryBackoff(), resumeRetry(), toMessageEvents({ loopId, now }));
 */
export function markAttempt<T>(): OperatorFunction<T, T | AttemptMark> {
  return (source) => concat(of(ATTEMPT), source);
}
