import { describe, expect, it } from 'vitest';
import { catchError, map, mergeMap, Observable, of, VirtualTimeScheduler } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import {
  CircuitBreaker,
  circuitBreaker,
  isEndpointFailure,
  withCircuitBreaker,
} from '../../src/operators/circuit-breaker.js';
import { ProviderError } from '../../src/types/errors.js';
import type { ModelConfig, Provider, StreamEvent, StreamRequest } from '../../src/types/provider.js';
import { DEFAULT_CACHE_CONFIG } from '../../src/types/config.js';
import { emptyAssistant } from '../../src/types/message.js';

const network = ProviderError.network('connection reset');
const auth = ProviderError.auth('bad key', { status: 401 });
const badRequest = ProviderError.api('invalid tool schema', { status: 400 });
const serverError = ProviderError.api('internal error', { status: 500 });

function scheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

/** One letter per call: s = succeeded, f = failed through the breaker, o = failed fast (circuitOpen). */
const outcome = <T>(call$: Observable<T>): Observable<string> =>
  call$.pipe(
    map(() => 's'),
    catchError((e: unknown) => of(e instanceof ProviderError && e.kind === 'circuitOpen' ? 'o' : 'f')),
  );

describe('circuitBreaker', () => {
  it('opens after N consecutive counted failures and then fails fast', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const breaker = new CircuitBreaker({ failureThreshold: 3 });
      const calls = cold('a-b-c-d-e|');
      const result = calls.pipe(mergeMap(() => outcome(cold('#', undefined, network).pipe(circuitBreaker(breaker)))));
      expectObservable(result).toBe('f-f-f-o-o|');
    });
  });

  it('fails fast with a non-retryable circuitOpen ProviderError that says how long is left', () => {
    const breaker = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 1_000, name: 'api.example' });
    let caught: unknown;
    new Observable((s) => s.error(network)).pipe(circuitBreaker(breaker)).subscribe({ error: () => {} });
    of(1).pipe(circuitBreaker(breaker)).subscribe({ error: (e: unknown) => (caught = e) });
    expect(caught).toBeInstanceOf(ProviderError);
    const err = caught as ProviderError;
    expect(err.kind).toBe('circuitOpen');
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/api\.example/);
    expect(err.retryAfterMs).toBeGreaterThan(0);
    expect(err.retryAfterMs).toBeLessThanOrEqual(1_000);
  });

  it('stays open for the default 30 s cool-down of scheduler time, then admits a probe', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const breaker = new CircuitBreaker();
      // Five failures at 0..4 open the circuit at 4; at 30 003 one ms of cool-down is left; at 30 004 the probe runs.
      const calls = cold('aaaaa 29998ms b c|');
      const result = calls.pipe(
        mergeMap((c) => outcome((c === 'a' ? cold('#', undefined, network) : cold('(x|)')).pipe(circuitBreaker(breaker)))),
      );
      expectObservable(result).toBe('fffff 29998ms o s|');
    });
  });

  it('half-open admits exactly one probe; concurrent calls fail fast; the probe success closes it', () => {
    scheduler().run(({ cold, expectObservable, flush }) => {
      const breaker = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 10 });
      expectObservable(outcome(cold('#', undefined, network).pipe(circuitBreaker(breaker)))).toBe('(f|)');
      // At 10 the probe starts and takes 5 frames; calls at 11..14 fail fast; at 16 the circuit is closed.
      const calls = cold('----------abcde-f|');
      const result = calls.pipe(
        mergeMap((c) => outcome((c === 'a' ? cold('-----(x|)') : cold('(x|)')).pipe(circuitBreaker(breaker)))),
      );
      expectObservable(result).toBe('-----------ooooss|');
      flush();
      expect(breaker.state).toBe('closed');
      expect(breaker.failures).toBe(0);
    });
  });

  it('a failed probe re-opens the circuit for a full cool-down', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const breaker = new CircuitBreaker({ failureThreshold: 2, openDurationMs: 10 });
      const calls = cold('ab--------c-d--------e|');
      const result = calls.pipe(
        mergeMap((c) => outcome((c === 'e' ? cold('(x|)') : cold('#', undefined, network)).pipe(circuitBreaker(breaker)))),
      );
      // a, b fail -> open at 1; c at 10 is still open (1 ms left); d at 12 is the probe: it fails and re-opens
      // the circuit at 12, so e at 21 (1 ms left again) fails fast although it would have succeeded.
      expectObservable(result).toBe('ff--------o-f--------o|');
    });
  });

  it('admits the next probe after the re-opened cool-down and closes on its success', () => {
    scheduler().run(({ cold, expectObservable, flush }) => {
      const breaker = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 5 });
      const calls = cold('a----b----c|');
      const result = calls.pipe(
        mergeMap((c) => outcome((c === 'c' ? cold('(x|)') : cold('#', undefined, network)).pipe(circuitBreaker(breaker)))),
      );
      expectObservable(result).toBe('f----f----s|');
      flush();
      expect(breaker.state).toBe('closed');
    });
  });

  it('counts only retryable and server failures: auth and 400 errors neither count nor reset', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const breaker = new CircuitBreaker({ failureThreshold: 2 });
      const errors: Record<string, ProviderError> = { n: network, a: auth, b: badRequest, s: serverError };
      const calls = cold('nabasn|');
      const result = calls.pipe(mergeMap((c) => outcome(cold('#', undefined, errors[c]).pipe(circuitBreaker(breaker)))));
      // n counts (1), a and b are neutral, the next a is neutral, s (500) counts (2) -> open; n fails fast.
      expectObservable(result).toBe('fffffo|');
    });
  });

  it('a success resets the consecutive-failure tally', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const breaker = new CircuitBreaker({ failureThreshold: 2 });
      const calls = cold('nsnsnn-n|');
      const result = calls.pipe(
        mergeMap((c) => outcome((c === 's' ? cold('(x|)') : cold('#', undefined, network)).pipe(circuitBreaker(breaker)))),
      );
      expectObservable(result).toBe('fsfsff-o|');
    });
  });

  it('an unsubscribed probe frees the half-open slot without closing or re-opening', () => {
    const breaker = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 0 });
    new Observable((s) => s.error(network)).pipe(circuitBreaker(breaker)).subscribe({ error: () => {} });
    expect(breaker.state).toBe('halfOpen');
    const probe = new Observable<never>(() => {}).pipe(circuitBreaker(breaker)).subscribe();
    let failedFast = false;
    of(1).pipe(circuitBreaker(breaker)).subscribe({ error: () => (failedFast = true) });
    expect(failedFast).toBe(true);
    probe.unsubscribe();
    expect(breaker.state).toBe('halfOpen');
    let value = 0;
    of(1).pipe(circuitBreaker(breaker)).subscribe((v) => (value = v));
    expect(value).toBe(1);
    expect(breaker.state).toBe('closed');
  });

  it('isEndpointFailure: retryable kinds and 5xx api errors count, the rest do not', () => {
    expect(isEndpointFailure(network)).toBe(true);
    expect(isEndpointFailure(ProviderError.rateLimited('slow down', 1000))).toBe(true);
    expect(isEndpointFailure(serverError)).toBe(true);
    expect(isEndpointFailure(auth)).toBe(false);
    expect(isEndpointFailure(badRequest)).toBe(false);
    expect(isEndpointFailure(ProviderError.contextOverflow('prompt is too long', { status: 400 }))).toBe(false);
    expect(isEndpointFailure(ProviderError.cancelled())).toBe(false);
    expect(isEndpointFailure(new Error('a bug'))).toBe(false);
    // Only ProviderErrors, only the api kind counts by status, and only with a status.
    expect(isEndpointFailure({ kind: 'network', retryable: true })).toBe(false);
    expect(isEndpointFailure(new ProviderError('auth', 'gateway said no', { status: 503 }))).toBe(false);
    expect(isEndpointFailure(ProviderError.api('no status'))).toBe(false);
  });

  it('says why it fails fast: the time left while open, the probe while half-open, the default name', () => {
    const clock = new VirtualTimeScheduler();
    const breaker = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 1_000, scheduler: clock });
    const errorOf = (): ProviderError => {
      const ticket = breaker.acquire();
      if (!(ticket instanceof ProviderError)) throw new Error('admitted');
      return ticket;
    };
    const first = breaker.acquire();
    if (first instanceof ProviderError) throw first;
    first.error(network);
    clock.frame = 250;
    expect(errorOf().message).toBe('Circuit open for endpoint after 1 consecutive failures: open for another 750 ms; failing fast.');
    clock.frame = 1_000;
    expect(breaker.acquire()).not.toBeInstanceOf(ProviderError);
    const halfOpen = errorOf();
    expect(halfOpen.message).toBe('Circuit open for endpoint after 1 consecutive failures: half-open, a probe call is in flight; failing fast.');
    expect(halfOpen.retryAfterMs).toBeUndefined();
  });

  it('rejects nonsensical options, saying which and what it got', () => {
    expect(() => new CircuitBreaker({ failureThreshold: 0 })).toThrow(new RangeError('failureThreshold must be >= 1, got 0'));
    expect(() => new CircuitBreaker({ openDurationMs: -1 })).toThrow(new RangeError('openDurationMs must be >= 0, got -1'));
  });
});

describe('circuitBreaker: calls that overlap a state change', () => {
  /** A call that stays in flight until the test settles it. */
  const pending = (breaker: CircuitBreaker) => {
    let settle!: { error(e: unknown): void; complete(): void };
    const outcomes: string[] = [];
    new Observable<never>((s) => {
      settle = { error: (e) => s.error(e), complete: () => s.complete() };
    })
      .pipe(circuitBreaker(breaker))
      .subscribe({ error: (e: unknown) => outcomes.push(e instanceof ProviderError && e.kind === 'circuitOpen' ? 'o' : 'f'), complete: () => outcomes.push('s') });
    return { settle, outcomes };
  };
  const fail = (breaker: CircuitBreaker) => new Observable((s) => s.error(network)).pipe(circuitBreaker(breaker)).subscribe({ error: () => {} });
  /** 's' when admitted and succeeded, 'o' when failed fast. */
  const tryCall = (breaker: CircuitBreaker): string => {
    let result = '';
    of(1).pipe(circuitBreaker(breaker)).subscribe({ complete: () => (result ||= 's'), error: () => (result = 'o') });
    return result;
  };

  it('a probe left in flight by reset() does not block the next half-open probe once the circuit re-opens', () => {
    const breaker = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 0 });
    fail(breaker);
    pending(breaker); // the probe, never settled
    breaker.reset();
    expect(breaker.state).toBe('closed');
    fail(breaker);
    expect(breaker.state).toBe('halfOpen');
    expect(tryCall(breaker)).toBe('s');
    expect(breaker.state).toBe('closed');
  });

  it('a probe made stale by reset() that fails later neither frees the new probe slot nor re-opens the circuit', () => {
    const clock = new VirtualTimeScheduler();
    const breaker = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 10, scheduler: clock });
    fail(breaker); // open at 0
    clock.frame = 10;
    const stale = pending(breaker); // the first probe
    breaker.reset();
    fail(breaker); // re-open at 10
    clock.frame = 20;
    const probe = pending(breaker); // the second probe, in flight
    expect(tryCall(breaker)).toBe('o');
    stale.settle.error(network);
    expect(tryCall(breaker)).toBe('o'); // the second probe still holds the slot
    expect(breaker.state).toBe('halfOpen'); // the stale failure did not re-open it for another cool-down
    probe.settle.complete();
    expect(breaker.state).toBe('closed');
    expect(tryCall(breaker)).toBe('s');
  });

  it('a call admitted before the circuit opened does not free the probe slot when it ends during the probe', () => {
    const breaker = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 0 });
    const early = pending(breaker);
    fail(breaker); // opens; the early call is still in flight
    const probe = pending(breaker);
    expect(tryCall(breaker)).toBe('o');
    early.settle.error(network);
    expect(tryCall(breaker)).toBe('o');
    probe.settle.complete();
    expect(breaker.state).toBe('closed');
  });

  it('a late failure of a call admitted before the circuit opened does not restart the cool-down', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const breaker = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 10 });
      // a (admitted at 0) fails at 5; b fails at 1 and opens the circuit until 11; c at 11 is admitted.
      const calls = cold('ab---------c|');
      const call = (c: string) => (c === 'a' ? cold('-----#', undefined, network) : c === 'b' ? cold('#', undefined, network) : cold('(x|)'));
      expectObservable(calls.pipe(mergeMap((c) => outcome(call(c).pipe(circuitBreaker(breaker)))))).toBe('-f---f-----s|');
    });
  });

  it('a ticket settles exactly once: later calls are ignored', () => {
    const breaker = new CircuitBreaker({ failureThreshold: 2 });
    const ticket = breaker.acquire();
    if (ticket instanceof ProviderError) throw ticket;
    ticket.error(network);
    ticket.error(network);
    ticket.success();
    expect(breaker.failures).toBe(1);
    expect(breaker.state).toBe('closed');
  });
});

describe('withCircuitBreaker', () => {
  const model = (id: string, baseUrl = 'http://a.test'): ModelConfig => ({ id, api: 'openai-responses', provider: 'openai', baseUrl });
  const request = (m: ModelConfig): StreamRequest => ({
    model: m,
    systemPrompt: '',
    messages: [],
    tools: [],
    thinkingLevel: 'off',
    cacheConfig: DEFAULT_CACHE_CONFIG,
  });

  it('keeps one breaker per endpoint (base URL + model)', () => {
    scheduler().run(({ cold, expectObservable, flush }) => {
      const failing: Provider = () => cold<StreamEvent>('#', undefined, network);
      const guarded = withCircuitBreaker(failing, { failureThreshold: 1 });
      const a = model('m1');
      const b = model('m2');
      const c = model('m1', 'http://b.test');
      const seq = cold('abcab|', { a, b, c });
      expectObservable(seq.pipe(mergeMap((m) => outcome(guarded(request(m), {}))))).toBe('fffoo|');
      flush();
      expect(guarded.breakers.size).toBe(3);
    });
  });

  it('does not call the wrapped provider stream while the circuit is open', () => {
    let subscriptions = 0;
    const failing: Provider = () =>
      new Observable<StreamEvent>((s) => {
        subscriptions++;
        s.error(network);
      });
    const guarded = withCircuitBreaker(failing, { failureThreshold: 2 });
    const m = model('m1');
    for (let i = 0; i < 5; i++) guarded(request(m), {}).subscribe({ error: () => {} });
    expect(subscriptions).toBe(2);
    expect([...guarded.breakers.values()][0]!.state).toBe('open');
  });

  it('names each breaker after its endpoint key unless a name is given', () => {
    const failing: Provider = () => new Observable<StreamEvent>((s) => s.error(network));
    const messageOf = (guarded: Provider, m: ModelConfig): string => {
      let message = '';
      for (let i = 0; i < 2; i++) guarded(request(m), {}).subscribe({ error: (e: unknown) => (message = (e as Error).message) });
      return message;
    };
    const { baseUrl: _, ...noBaseUrl } = model('m1');
    expect(messageOf(withCircuitBreaker(failing, { failureThreshold: 1 }), noBaseUrl)).toMatch(/^Circuit open for openai-responses \(default\) m1 after/);
    expect(messageOf(withCircuitBreaker(failing, { failureThreshold: 1, name: 'primary' }), model('m1'))).toMatch(/^Circuit open for primary after/);
  });

  it('passes events through untouched', () => {
    const message = emptyAssistant('m1', 'openai', 0);
    const ok: Provider = () => of<StreamEvent[]>({ type: 'start', partial: message }, { type: 'done', message });
    const seen: string[] = [];
    withCircuitBreaker(ok)(request(model('m1')), {}).subscribe((e) => seen.push(e.type));
    expect(seen).toEqual(['start', 'done']);
  });
});
