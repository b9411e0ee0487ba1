import { describe, expect, it } from 'vitest';
import { defer, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { marbles } from 'rxjs-marbles';
import { backoffDelay, retryBackoff } from '../../src/operators/retry-backoff.js';
import { ProviderError } from '../../src/types/errors.js';
import { DEFAULT_RETRY_CONFIG, type RetryConfig } from '../../src/types/config.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

/** 10 ms, doubling, no jitter: delays 10, 20, 40, ... easy to read in a diagram. */
const plain: Partial<RetryConfig> = { maxRetries: 2, initialDelayMs: 10, backoffMultiplier: 2, maxDelayMs: 1_000, jitter: 0 };

const network = ProviderError.network('socket hang up');

describe('backoffDelay', () => {
  const noJitter: RetryConfig = { ...DEFAULT_RETRY_CONFIG, jitter: 0 };

  it('grows as initial × multiplier^(attempt-1) and is capped at maxDelayMs', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7].map((n) => backoffDelay(noJitter, n, network, () => 0.5));
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
  });

  it('applies ±jitter with the injected randomness: 0 → ×0.8, 0.5 → ×1.0, 0.999 → ~×1.2', () => {
    const config: RetryConfig = { ...DEFAULT_RETRY_CONFIG, initialDelayMs: 10_000 };
    expect(backoffDelay(config, 1, network, () => 0)).toBe(8_000);
    expect(backoffDelay(config, 1, network, () => 0.5)).toBe(10_000);
    expect(backoffDelay(config, 1, network, () => 0.999)).toBe(11_996);
  });

  it('jitters the capped delay, so a capped delay stays within ±20% of the cap', () => {
    expect(backoffDelay(DEFAULT_RETRY_CONFIG, 10, network, () => 0)).toBe(24_000);
    expect(backoffDelay(DEFAULT_RETRY_CONFIG, 10, network, () => 0.999)).toBe(35_988);
  });

  it("uses the server's retryAfterMs as is: no backoff, no jitter", () => {
    const limited = ProviderError.rateLimited('slow down', 7_500);
    expect(backoffDelay(DEFAULT_RETRY_CONFIG, 1, limited, () => 0)).toBe(7_500);
    expect(backoffDelay(DEFAULT_RETRY_CONFIG, 3, limited, () => 0.999)).toBe(7_500);
  });
});

describe('retryBackoff', () => {
  it('re-subscribes after 10 then 20 virtual ms and rethrows after maxRetries', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('--#', undefined, network);
      // Default scheduler: asyncScheduler, which `run` makes virtual.
      expectObservable(source.pipe(retryBackoff(plain))).toBe('------------------------------------#', undefined, network);
      expectSubscriptions(source.subscriptions).toBe([
        '^-!',
        '------------^-!',
        '----------------------------------^-!',
      ]);
    });
  });

  it('lets a stream that succeeds on a retry through, values and all', () => {
    scheduler().run(({ cold, expectObservable }) => {
      let attempt = 0;
      const flaky = defer(() => (attempt++ === 0 ? cold('-a#', { a: 'partial' }, network) : cold('-b|', { b: 'whole' })));
      // The first attempt's value was already emitted; the retry's follows after the 10 ms delay.
      expectObservable(flaky.pipe(retryBackoff(plain))).toBe('-a 11ms b|', { a: 'partial', b: 'whole' });
    });
  });

  it("waits the server's retryAfterMs instead of the computed delay", () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const limited = ProviderError.rateLimited('429', 50);
      const source = cold('#', undefined, limited);
      expectObservable(source.pipe(retryBackoff({ ...plain, maxRetries: 1 }))).toBe('50ms #', undefined, limited);
      expectSubscriptions(source.subscriptions).toBe(['(^!)', '50ms (^!)']);
    });
  });

  it('rethrows the LAST error when retries are exhausted', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const errors = [ProviderError.network('first'), ProviderError.network('second'), ProviderError.rateLimited('third')];
      let attempt = 0;
      const source = defer(() => cold('#', undefined, errors[attempt++]));
      expectObservable(source.pipe(retryBackoff(plain))).toBe('30ms #', undefined, errors[2]);
    });
  });

  it.each([
    ['auth', ProviderError.auth('bad key', { status: 401 })],
    ['api', ProviderError.api('bad request', { status: 400 })],
    ['contextOverflow', ProviderError.contextOverflow('prompt is too long')],
    ['circuitOpen', new ProviderError('circuitOpen', 'circuit open for api.example')],
    ['cancelled', ProviderError.cancelled()],
    ['a plain Error', new Error('boom')],
  ])('does not retry %s: it passes straight through at once', (_name, error) => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('--#', undefined, error);
      expectObservable(source.pipe(retryBackoff(plain))).toBe('--#', undefined, error);
      expectSubscriptions(source.subscriptions).toBe('^-!');
    });
  });

  it('stops retrying as soon as a non-retryable error follows a retryable one', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const auth = ProviderError.auth('key revoked');
      let attempt = 0;
      const source = defer(() => cold('-#', undefined, attempt++ === 0 ? network : auth));
      expectObservable(source.pipe(retryBackoff({ ...plain, maxRetries: 5 }))).toBe('12ms #', undefined, auth);
    });
  });

  it('calls onRetry with the 1-based attempt, the delay and the error, before each retry', () => {
    const calls: Array<[number, number, ProviderError]> = [];
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold('#', undefined, network);
      const retried = source.pipe(retryBackoff({ ...plain, maxRetries: 3 }, { onRetry: (n, ms, e) => calls.push([n, ms, e]) }));
      expectObservable(retried).toBe('70ms #', undefined, network);
    });
    expect(calls).toEqual([
      [1, 10, network],
      [2, 20, network],
      [3, 40, network],
    ]);
  });

  it('draws jitter from the injected randomness, so delays are reproducible', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold('#', undefined, network);
      const jittered = source.pipe(retryBackoff({ ...plain, maxRetries: 2, initialDelayMs: 100, jitter: 0.2 }, { random: () => 0 }));
      // 100 × 0.8 = 80, then 200 × 0.8 = 160.
      expectObservable(jittered).toBe('240ms #', undefined, network);
    });
  });

  it('does not retry with maxRetries 0', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-#', undefined, network).pipe(retryBackoff({ maxRetries: 0 }))).toBe('-#', undefined, network);
    });
  });

  it('uses the injected scheduler for its delays', () => {
    const virtual = scheduler();
    virtual.maxFrames = Number.POSITIVE_INFINITY;
    let caught: unknown;
    let retries = 0;
    const source: Observable<never> = defer(() => {
      retries++;
      throw network;
    });
    source.pipe(retryBackoff({ ...plain, maxRetries: 1, initialDelayMs: 5_000, maxDelayMs: 60_000 }, { scheduler: virtual })).subscribe({ error: (e: unknown) => (caught = e) });
    expect(retries).toBe(1);
    virtual.flush();
    expect(retries).toBe(2);
    expect(caught).toBe(network);
    expect(virtual.now()).toBe(5_000);
  });

  // rxjs-marbles: the same contract, written framework-agnostically (its own assertions, no vitest expect).
  it(
    'is marble-testable with rxjs-marbles too',
    marbles((m) => {
      const source = m.cold('-#', undefined, network);
      m.expect(source.pipe(retryBackoff({ ...plain, maxRetries: 1 }))).toBeObservable('------------#', undefined, network);
      m.expect(source).toHaveSubscriptions(['^!', '-----------^!']);
    }),
  );
});
