import { describe, expect, it } from 'vitest';
import { map, type Observable, tap } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { callModel, loopState, type LoopOutput, type LoopState } from '../../../src/index.js';
import { ProviderError } from '../../../src/types/errors.js';
import { emptyAssistant, userMessage, type AssistantMessage } from '../../../src/types/message.js';
import type { Provider, StreamEvent, StreamRequest } from '../../../src/types/provider.js';
import { DEFAULT_CACHE_CONFIG } from '../../../src/types/config.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

const model = { id: 'm', api: 'openai-completions', provider: 'p' } as const;
const request: StreamRequest = {
  model, systemPrompt: '', messages: [userMessage('hi', 0)], tools: [], thinkingLevel: 'off', cacheConfig: DEFAULT_CACHE_CONFIG, sessionId: 's',
};
const partial: AssistantMessage = { ...emptyAssistant('m', 'p', 0), content: [{ type: 'text', text: 'Hi' }] };
const final: AssistantMessage = { ...partial, stopReason: 'stop' };
const parts: Record<string, StreamEvent> = {
  s: { type: 'start', partial: emptyAssistant('m', 'p', 0) },
  t: { type: 'textDelta', contentIndex: 0, delta: 'Hi', partial },
  d: { type: 'done', message: final },
};
const withRequest: LoopState = { ...loopState('L1', request.messages), request };

/** A provider that plays one cold stream per call, in order. */
function provider(...calls: Array<() => Observable<StreamEvent>>): Provider & { calls: number } {
  const p = Object.assign(() => calls[p.calls++]!(), { calls: 0 });
  return p as Provider & { calls: number };
}

describe('callModel', () => {
  it('streams the call as message events, then the state with the final message and no request (the stream ends at done)', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const model$ = provider(() => cold('-s-t-d|', parts));
      const { request: _r, ...rest } = withRequest;
      expectObservable(cold('s|', { s: withRequest }).pipe(callModel({ provider: model$, retry: { maxRetries: 0 } }))).toBe('-a-u-(el|)', {
        a: { type: 'MessageStart', loopId: 'L1', message: emptyAssistant('m', 'p', 0), timestamp: 1 },
        u: { type: 'MessageUpdate', loopId: 'L1', message: partial, delta: { type: 'text', contentIndex: 0, delta: 'Hi' }, timestamp: 3 },
        e: { type: 'MessageEnd', loopId: 'L1', message: final, timestamp: 5 },
        l: { ...rest, partial: final, assistant: final },
      });
    });
  });

  it('announces a retry with RetryScheduled and delivers the second attempt', () => {
    const out: LoopOutput[] = [];
    scheduler().run(({ cold, flush }) => {
      const model$ = provider(() => cold('-#', {}, ProviderError.rateLimited('slow down')), () => cold('-s-t-d|', parts));
      const stage = callModel({ provider: model$, retry: { maxRetries: 2, initialDelayMs: 10, jitter: 0 } });
      cold('s|', { s: withRequest }).pipe(stage, tap((o) => out.push(o))).subscribe();
      flush();
      expect(model$.calls).toBe(2);
    });
    expect(out.map((o) => o.type)).toEqual(['RetryScheduled', 'MessageStart', 'MessageUpdate', 'MessageEnd', 'LoopState']);
    expect(out[0]).toMatchObject({ attempt: 1, delayMs: 10, errorKind: 'rateLimited', timestamp: 1 });
    expect(out[1]!.type === 'MessageStart' && out[1]!.timestamp).toBe(12);
    expect((out[4] as LoopState).assistant).toEqual(final);
  });

  it('hands a failure on in the state, with the message as far as it streamed, instead of failing', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const broken = new ProviderError('contextOverflow', 'too long');
      const model$ = provider(() => cold('-s-t-#', parts, broken));
      const { request: _r, ...rest } = withRequest;
      expectObservable(cold('s|', { s: withRequest }).pipe(callModel({ provider: model$ }))).toBe('-a-u-(l|)', {
        a: expect.objectContaining({ type: 'MessageStart' }),
        u: expect.objectContaining({ type: 'MessageUpdate' }),
        l: { ...rest, partial, failure: { error: broken, model: { id: 'm', provider: 'p' } } },
      });
    });
  });

  it('passes a state with no request, or an ended run, through without calling the provider', () => {
    const model$ = provider();
    scheduler().run(({ cold, expectObservable }) => {
      const idle = loopState('L1');
      const ended: LoopState = { ...withRequest, ended: 'aborted' };
      expectObservable(cold('-i-e|', { i: idle, e: ended }).pipe(callModel({ provider: model$ }))).toBe('-i-e|', { i: idle, e: ended });
    });
    expect(model$.calls).toBe(0);
  });

  it('a stream that breaks the provider contract is a failure in the state, not retried', () => {
    let calls = 0;
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const stream = cold('-s-x-d|', { ...parts, x: { type: 'textDelta', contentIndex: 0, delta: 7, partial } as never });
      const model$: Provider = () => (calls++, stream);
      const { request: _r, ...rest } = withRequest;
      expectObservable(cold('s|', { s: withRequest }).pipe(callModel({ provider: model$, retry: { maxRetries: 3 } }))).toBe('-a-(l|)', {
        a: expect.objectContaining({ type: 'MessageStart' }),
        l: { ...rest, partial: emptyAssistant('m', 'p', 0), failure: { error: expect.objectContaining({ kind: 'other', message: expect.stringContaining('event 1 (textDelta) has a delta that is not a string') }), model: { id: 'm', provider: 'p' } } },
      });
      expectSubscriptions(stream.subscriptions).toBe('^--!');
    });
    expect(calls).toBe(1);
  });

  it('done is final: later events are ignored and the source is left to drain on its own', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const stream = cold('-s-d-t-d|', parts);
      const model$ = provider(() => stream);
      expectObservable(cold('s|', { s: withRequest }).pipe(callModel({ provider: model$ }))).toBe('-a-(el|)', {
        a: expect.objectContaining({ type: 'MessageStart' }),
        e: expect.objectContaining({ type: 'MessageEnd' }),
        l: expect.objectContaining({ type: 'LoopState', assistant: final }),
      });
      expectSubscriptions(stream.subscriptions).toBe('^-------!');
    });
  });

  it('an abort cuts the stream (the provider is unsubscribed) and hands on the state without an assistant', () => {
    const controller = new AbortController();
    scheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const stream = cold('-s-t-----d|', parts);
      const model$ = provider(() => stream);
      hot('-----a').subscribe(() => controller.abort());
      const { request: _r, ...rest } = withRequest;
      expectObservable(cold('s|', { s: withRequest }).pipe(callModel({ provider: model$, signal: controller.signal }))).toBe('-a-u-(l|)', {
        a: expect.objectContaining({ type: 'MessageStart' }),
        u: expect.objectContaining({ type: 'MessageUpdate' }),
        l: { ...rest, partial },
      });
      expectSubscriptions(stream.subscriptions).toBe('^----!');
    });
  });

  it('a retry through a providerStream operator resumes where the failed attempt broke (the repeated prefix is not shown again)', () => {
    const out: LoopOutput[] = [];
    const hello: AssistantMessage = { ...partial, content: [{ type: 'text', text: 'Hello' }] };
    const text = (delta: string, message: AssistantMessage): StreamEvent => ({ type: 'textDelta', contentIndex: 0, delta, partial: message });
    const seen: string[] = [];
    scheduler().run(({ cold, flush }) => {
      const model$ = provider(
        () => cold('-s-a-#', { s: parts.s!, a: text('Hel', partial) }, ProviderError.network('reset')),
        () => cold('-s-b-c-d|', { s: parts.s!, b: text('He', partial), c: text('llo', hello), d: { type: 'done', message: { ...hello, stopReason: 'stop' } } }),
      );
      const stage = callModel({
        provider: model$,
        retry: { maxRetries: 1, initialDelayMs: 5, jitter: 0 },
        providerStream: map((e) => (seen.push(e.type), e)),
      });
      cold('s|', { s: withRequest }).pipe(stage, tap((o) => out.push(o))).subscribe();
      flush();
    });
    expect(seen).toEqual(['start', 'textDelta', 'start', 'textDelta', 'textDelta', 'done']);
    const deltas = out.flatMap((o) => (o.type === 'MessageUpdate' ? [o.delta.delta] : []));
    expect(deltas).toEqual(['Hel', 'lo']);
    expect(out.map((o) => o.type)).toEqual(['MessageStart', 'MessageUpdate', 'RetryScheduled', 'MessageUpdate', 'MessageEnd', 'LoopState']);
  });
});
