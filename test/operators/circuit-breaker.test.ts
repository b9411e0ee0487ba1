import { describe, expect, it } from 'vitest';
import { catchError, map, mergeMap, Observable, of } from 'rxjs';
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
  });

  it('rejects nonsensical options', () => {
    expect(() => new CircuitBreaker({ failureThreshold: 0 })).toThrow(RangeError);
    expect(() => new CircuitBreaker({ openDurationMs: -1 })).toThrow(RangeError);
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

  it('passes events through untouched', () => {
    const message = emptyAssistant('m1', 'openai', 0);
    const ok: Provider = () => of<StreamEvent[]>({ type: 'start', partial: message }, { type: 'done', message });
    const seen: string[] = [];
    withCircuitBreaker(ok)(request(model('m1')), {}).subscribe((e) => seen.push(e.type));
    expect(seen).toEqual(['start', 'done']);
  });
});
