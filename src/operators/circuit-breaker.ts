import { asyncScheduler, defer, Observable, throwError } from 'rxjs';
import type { MonoTypeOperatorFunction, SchedulerLike } from 'rxjs';
import { isProviderError, ProviderError } from '../types/errors.js';
import type { ModelConfig, Provider } from '../types/provider.js';

/** Where a breaker stands: `closed` lets calls through, `open` fails them fast, `halfOpen` admits one probe. */
export type CircuitState = 'closed' | 'open' | 'halfOpen';

export interface CircuitBreakerOptions {
  /** Consecutive counted failures that open the circuit. Default 5. */
  failureThreshold?: number;
  /** How long the circuit stays open before a probe is admitted, in scheduler time. Default 30 000 ms. */
  openDurationMs?: number;
  /** Clock for the cool-down. Default `asyncScheduler` (virtual under `TestScheduler.run`). */
  scheduler?: SchedulerLike;
  /**
   * Which errors count against the endpoint. Default: retryable ProviderErrors (`rateLimited`, `network`) and
   * server-side `api` errors (status >= 500). Auth errors, 4xx, context overflow and cancellation say nothing
   * about the endpoint's health, so they neither count nor reset the tally.
   */
  isFailure?: (error: unknown) => boolean;
  /** Names the endpoint in the CircuitOpen error message. */
  name?: string;
}

/** The default `isFailure`: only failures that say the endpoint itself is unwell. */
export function isEndpointFailure(error: unknown): boolean {
  if (!isProviderError(error)) return false;
  if (error.retryable) return true;
  return error.kind === 'api' && (error.status ?? 0) >= 500;
}

/**
 * The state of one endpoint's circuit (oxi-agent's breaker): closed -> open after `failureThreshold`
 * consecutive counted failures; open -> half-open once `openDurationMs` of scheduler time has passed;
 * half-open admits exactly ONE probe call (every other call meanwhile fails fast, unlike oxi, whose
 * half-open state let any number through); the probe's success closes the circuit, its failure re-opens it.
 *
 * Most code does not touch it directly: use the {@link circuitBreaker} operator or {@link withCircuitBreaker}.
 */
export class CircuitBreaker {
  readonly failureThreshold: number;
  readonly openDurationMs: number;
  private readonly scheduler: SchedulerLike;
  private readonly isFailure: (error: unknown) => boolean;
  private readonly name: string;
  private consecutiveFailures = 0;
  private openedAt = 0;
  private current: CircuitState = 'closed';
  /** The ticket of the half-open probe in flight: only that call frees the slot or re-opens the circuit. */
  private probe: object | undefined;

  constructor(options: CircuitBreakerOptions = {}) {
    this.failureThreshold = options.failureThreshold ?? 5;
    this.openDurationMs = options.openDurationMs ?? 30_000;
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.isFailure = options.isFailure ?? isEndpointFailure;
    this.name = options.name ?? 'endpoint';
    if (!(this.failureThreshold >= 1)) throw new RangeError(`failureThreshold must be >= 1, got ${this.failureThreshold}`);
    if (!(this.openDurationMs >= 0)) throw new RangeError(`openDurationMs must be >= 0, got ${this.openDurationMs}`);
  }

  /** The state as of now: an open circuit whose cool-down has elapsed reads as `halfOpen`. */
  get state(): CircuitState {
    if (this.current === 'open' && this.coolDownLeft() === 0) return 'halfOpen';
    return this.current;
  }

  /** Consecutive counted failures since the last success. */
  get failures(): number {
    return this.consecutiveFailures;
  }

  /**
   * Asks to make a call. Returns a ticket to settle when the call ends, or a `circuitOpen` ProviderError
   * when the call must fail fast.
   */
  acquire(): CircuitTicket | ProviderError {
    if (this.current === 'open') {
      const left = this.coolDownLeft();
      if (left > 0) return this.openError(`open for another ${left} ms`, left);
      this.current = 'halfOpen';
    }
    if (this.current === 'halfOpen') {
      if (this.probe) return this.openError('half-open, a probe call is in flight', undefined);
      const probe = {};
      this.probe = probe;
      return this.ticket(probe);
    }
    return this.ticket(undefined);
  }

  /** Forces the circuit closed and forgets past failures. */
  reset(): void {
    this.current = 'closed';
    this.consecutiveFailures = 0;
    this.probe = undefined;
  }

  private ticket(probe: object | undefined): CircuitTicket {
    let settled = false;
    const settle = (outcome: 'success' | 'failure' | 'neutral'): void => {
      if (settled) return;
      settled = true;
      // A probe that reset() made stale (a new one may be in flight) no longer owns the slot.
      const current = probe !== undefined && probe === this.probe;
      if (current) this.probe = undefined;
      if (outcome === 'success') this.reset();
      else if (outcome === 'failure') this.recordFailure(current);
    };
    return {
      success: () => settle('success'),
      // Stryker disable next-line StringLiteral: equivalent, any outcome but 'success' and 'failure' is neutral
      error: (error: unknown) => settle(this.isFailure(error) ? 'failure' : 'neutral'),
      // Stryker disable next-line StringLiteral: equivalent, as above
      release: () => settle('neutral'),
    };
  }

  private recordFailure(probe: boolean): void {
    this.consecutiveFailures++;
    // A failed probe re-opens at once; a closed circuit waits for the threshold. Calls admitted before the
    // circuit opened may still fail afterwards: they only push the tally, they do not restart the cool-down.
    if (probe || (this.current === 'closed' && this.consecutiveFailures >= this.failureThreshold)) {
      this.current = 'open';
      this.openedAt = this.scheduler.now();
    }
  }

  private coolDownLeft(): number {
    return Math.max(0, this.openedAt + this.openDurationMs - this.scheduler.now());
  }

  private openError(why: string, retryAfterMs: number | undefined): ProviderError {
    return new ProviderError(
      'circuitOpen',
      `Circuit open for ${this.name} after ${this.consecutiveFailures} consecutive failures: ${why}; failing fast.`,
      // Stryker disable next-line ConditionalExpression: equivalent, ProviderError leaves out an undefined retryAfterMs
      retryAfterMs === undefined ? {} : { retryAfterMs },
    );
  }
}

/** One admitted call; settle it exactly once (later calls are ignored). */
export interface CircuitTicket {
  success(): void;
  error(error: unknown): void;
  /** The call ended without telling anything about the endpoint (unsubscribed). */
  release(): void;
}

/**
 * Guards a provider stream with a circuit breaker. Each subscription is one call: it is admitted or fails
 * fast with a non-retryable `ProviderError` of kind `circuitOpen`; completion counts as a success, a counted
 * error (see {@link CircuitBreakerOptions.isFailure}) as a failure; unsubscribing counts as neither.
 *
 * Pass a {@link CircuitBreaker} to share its state across calls to the same endpoint (the usual case);
 * options create a fresh breaker shared by every subscription to the returned operator.
 *
 * One subscription per call; each call's outcome on one timeline (failureThreshold 2, openDurationMs 5;
 * the source fails with a counted error for a, b, d and succeeds for g; O is a fail-fast circuitOpen error):
 * ```
 * calls:    a-b-c--d-e-fg
 * outcome:  #-#-O--#-O-Ox|
 * state:    C-O-O--H-O-OH   (b opens it at 2; d at 7 is the half-open probe: it fails and re-opens it;
 *                            e and f fail fast without calling the source; g at 12 is the next probe, closes it)
 * ```
 *
 * @example
 * ```ts
 * const breaker = new CircuitBreaker({ failureThreshold: 5, openDurationMs: 30_000 });
 * const events$ = provider(request, options).pipe(circuitBreaker(breaker), retryBackoff(retry));
 * ```
 */
export function circuitBreaker<T>(breakerOrOptions?: CircuitBreaker | CircuitBreakerOptions): MonoTypeOperatorFunction<T> {
  const breaker = breakerOrOptions instanceof CircuitBreaker ? breakerOrOptions : new CircuitBreaker(breakerOrOptions);
  return (source) =>
    defer(() => {
      const ticket = breaker.acquire();
      if (ticket instanceof ProviderError) return throwError(() => ticket);
      return new Observable<T>((subscriber) => {
        const subscription = source.subscribe({
          next: (value) => subscriber.next(value),
          error: (error: unknown) => {
            ticket.error(error);
            subscriber.error(error);
          },
          complete: () => {
            ticket.success();
            subscriber.complete();
          },
        });
        return () => {
          ticket.release();
          subscription.unsubscribe();
        };
      });
    });
}

/** The default endpoint key: protocol, base URL and model id. */
export function endpointKey(model: ModelConfig): string {
  return `${model.api} ${model.baseUrl ?? '(default)'} ${model.id}`;
}

export interface WithCircuitBreakerOptions extends CircuitBreakerOptions {
  /** Which calls share a breaker. Default {@link endpointKey}. */
  key?: (model: ModelConfig) => string;
}

/** A Provider guarded by one breaker per endpoint; `breakers` exposes their state. */
export interface CircuitBreakingProvider extends Provider {
  readonly breakers: ReadonlyMap<string, CircuitBreaker>;
}

/**
 * Wraps a Provider so that every endpoint (by default: protocol + base URL + model id) gets its own
 * {@link CircuitBreaker}.
 *
 * @example
 * ```ts
 * const guarded = withCircuitBreaker(defaultProviderRegistry().resolve(model), { failureThreshold: 3 });
 * agentLoop(prompts, context, { model, provider: guarded });
 * ```
 */
export function withCircuitBreaker(provider: Provider, options: WithCircuitBreakerOptions = {}): CircuitBreakingProvider {
  const { key = endpointKey, ...breakerOptions } = options;
  const breakers = new Map<string, CircuitBreaker>();
  const breakerFor = (model: ModelConfig): CircuitBreaker => {
    const k = key(model);
    let breaker = breakers.get(k);
    if (!breaker) {
      breaker = new CircuitBreaker({ name: breakerOptions.name ?? k, ...breakerOptions });
      breakers.set(k, breaker);
    }
    return breaker;
  };
  const guarded: Provider = (request, providerOptions) =>
    provider(request, providerOptions).pipe(circuitBreaker(breakerFor(request.model)));
  return Object.assign(guarded, { breakers: breakers as ReadonlyMap<string, CircuitBreaker> });
}
