import { asyncScheduler, type MonoTypeOperatorFunction, retry, type SchedulerLike, throwError, timer } from 'rxjs';
import { DEFAULT_RETRY_CONFIG, type RetryConfig } from '../types/config.js';
import { isProviderError, type ProviderError } from '../types/errors.js';

export interface RetryBackoffOptions {
  scheduler?: SchedulerLike;
  /** Uniform [0, 1) source for jitter; inject a fixed one for reproducible delays. */
  random?: () => number;
  /** Called before each retry with the 1-based attempt number, the delay and the cause. */
  onRetry?(attempt: number, delayMs: number, error: ProviderError): void;
}

/**
 * The delay before retry `attempt` (1-based): the server's retry-after when it gave one,
 * else initial × multiplier^(attempt-1), capped at maxDelay, times a jitter in [1-j, 1+j).
 */
export function backoffDelay(config: RetryConfig, attempt: number, error: ProviderError | undefined, random: () => number): number {
  if (error?.retryAfterMs !== undefined) return error.retryAfterMs;
  const base = Math.min(config.initialDelayMs * config.backoffMultiplier ** (attempt - 1), config.maxDelayMs);
  const factor = 1 - config.jitter + random() * 2 * config.jitter;
  return Math.round(base * factor);
}

/**
 * Re-subscribes to a failed provider stream with exponential backoff. Only `rateLimited` and
 * `network` ProviderErrors are retried; a server `retryAfterMs` wins over the computed delay;
 * anything else (auth, api, contextOverflow, circuitOpen, a plain Error) passes straight through.
 * Delays run on the given scheduler, so they are virtual under TestScheduler.
 *
 * ```
 * source:      --#                 (# = ProviderError.network, 2 ms into each attempt)
 * retryBackoff({ maxRetries: 2, initialDelayMs: 10, backoffMultiplier: 2, jitter: 0 })
 * subscribed:  ^-!         ^-!                   ^-!   (at 0, 2 + 10, 14 + 20)
 * output:      ------------------------------------#   (the last error, after 2 retries)
 * ```
 *
 * @example
 * provider(request, { signal }).pipe(
 *   retryBackoff({ maxRetries: 3 }, { onRetry: (n, ms) => console.log(`retry ${n} in ${ms}ms`) }),
 * );
 */
export function retryBackoff<T>(config: Partial<RetryConfig> = {}, options: RetryBackoffOptions = {}): MonoTypeOperatorFunction<T> {
  const full: RetryConfig = { ...DEFAULT_RETRY_CONFIG, ...config };
  const scheduler = options.scheduler ?? asyncScheduler;
  const random = options.random ?? Math.random;
  return retry<T>({
    count: full.maxRetries,
    delay: (error: unknown, attempt: number) => {
      const delayMs = retryDelay(full, attempt, error, random);
      if (delayMs === undefined) return throwError(() => error);
      options.onRetry?.(attempt, delayMs, error as ProviderError);
      return timer(delayMs, scheduler);
    },
  });
}

/**
 * The decision of {@link retryBackoff} on a failure: the delay before retry `attempt` (1-based)
 * when `error` is a retryable ProviderError and retries are left, else `undefined` (the failure
 * stands). For a caller that re-subscribes itself.
 */
export function retryDelay(config: RetryConfig, attempt: number, error: unknown, random: () => number): number | undefined {
  if (attempt > config.maxRetries || !isProviderError(error) || !error.retryable) return undefined;
  return backoffDelay(config, attempt, error, random);
}
