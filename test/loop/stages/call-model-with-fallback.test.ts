import { describe, expect, it } from 'vitest';
import { lastValueFrom, type Observable, of, tap, throwError, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import {
  callModelWithFallback, fallbackReason, loopState, type LoopOutput, type LoopState,
} from '../../../src/index.js';
import { withCircuitBreaker } from '../../../src/providers/index.js';
import { ProviderError } from '../../../src/types/errors.js';
import { emptyAssistant, userMessage, type AssistantMessage } from '../../../src/types/message.js';
import type { ModelConfig, Provider, StreamEvent, StreamRequest } from '../../../src/types/provider.js';
import { DEFAULT_CACHE_CONFIG } from '../../../src/types/config.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

const gpt: ModelConfig = { id: 'gpt', api: 'openai-completions', provider: 'openai', apiKey: 'sk-openai' };
const claude: ModelConfig = { id: 'claude', api: 'anthropic-messages', provider: 'anthropic' };
const gemini: ModelConfig = { id: 'gemini', api: 'google-generative-ai', provider: 'google', apiKey: 'g-key' };
const request: StreamRequest = {
  model: gpt, apiKey: 'sk-openai', systemPrompt: '', messages: [userMessage('hi', 0)], tools: [], thinkingLevel: 'off', cacheConfig: DEFAULT_CACHE_CONFIG,
};
const withRequest: LoopState = { ...loopState('L1', request.messages), request, turnIndex: 3 };

/** Stream parts of a message from `model`: s(tart), t(ext "Hi"), d(one). */
function parts(model: ModelConfig): Record<string, StreamEvent> {
  const partial: AssistantMessage = { ...emptyAssistant(model.id, model.provider, 0), content: [{ type: 'text', text: 'Hi' }] };
  return {
    s: { type: 'start', partial: emptyAssistant(model.id, model.provider, 0) },
    t: { type: 'textDelta', contentIndex: 0, delta: 'Hi', partial },
    d: { type: 'done', message: partial },
  };
}

/** A provider that plays one cold stream per call, in order, and keeps the requests. */
function provider(...calls: Array<() => Observable<StreamEvent>>): Provider & { requests: StreamRequest[] } {
  const requests: StreamRequest[] = [];
  const p = Object.assign((r: StreamRequest) => {
    requests.push(r);
    const next = calls[requests.length - 1];
    return next ? next() : throwError(() => new Error(`unexpected call ${requests.length}`));
  }, { requests });
  return p;
}

const letters = (out: LoopOutput[]): string =>
  out.map((o) => ({ LoopState: 's', RetryScheduled: 'r', ModelFallback: 'F', MessageStart: 'a', MessageUpdate: 'u', MessageEnd: 'e', MessageReset: 'w', HookError: 'H' })[o.type as string] ?? '?').join('');

describe('callModelWithFallback', () => {
  it('hands the turn to the next model once the retries of a retryable error are spent, announced by ModelFallback', () => {
    let openaiRequests: StreamRequest[] = [];
    scheduler().run(({ cold, expectObservable }) => {
      const openai = provider(() => cold('-#', {}, ProviderError.network('HTTP 503')), () => cold('-#', {}, ProviderError.network('HTTP 503')));
      const anthropic = provider(() => cold('-s-t-d|', parts(claude)));
      const stage = callModelWithFallback({
        models: [{ model: gpt, provider: openai }, { model: claude, provider: anthropic }],
        retry: { maxRetries: 1, initialDelayMs: 10, jitter: 0 },
      });
      const { request: _r, ...rest } = withRequest;
      const final = (parts(claude).d as { message: AssistantMessage }).message;
      // 0: first attempt, fails at 1; retry at 11 fails at 12: fallback; claude, subscribed at 12, starts at 13.
      expectObservable(cold('s|', { s: withRequest }).pipe(stage)).toBe('-r----------Fa-u-(el|)', {
        r: expect.objectContaining({ type: 'RetryScheduled', attempt: 1, errorKind: 'network' }),
        F: {
          type: 'ModelFallback', loopId: 'L1', turnIndex: 3, from: { provider: 'openai', id: 'gpt' }, to: { provider: 'anthropic', id: 'claude' },
          reason: 'retriesExhausted', errorMessage: 'network: HTTP 503', timestamp: 12,
        },
        a: expect.objectContaining({ type: 'MessageStart', message: emptyAssistant('claude', 'anthropic', 0), timestamp: 13 }),
        u: expect.objectContaining({ type: 'MessageUpdate' }),
        e: expect.objectContaining({ type: 'MessageEnd', message: final }),
        l: { ...rest, partial: final, assistant: final },
      });
      openaiRequests = openai.requests;
    });
    expect(openaiRequests).toHaveLength(2);
  });

  it('sends the fallback the same request with its own model and key, never the primary\'s key', () => {
    const openai = provider(() => throwError(() => ProviderError.rateLimited('slow down')));
    const anthropic = provider(() => throwError(() => new ProviderError('circuitOpen', 'open')));
    const google = provider(() => throwError(() => ProviderError.rateLimited('busy')));
    const stage = callModelWithFallback({
      models: [{ model: gpt, provider: openai }, { model: claude, provider: anthropic }, { model: gemini, provider: google }],
      retry: { maxRetries: 0 },
    });
    const out: LoopOutput[] = [];
    of(withRequest).pipe(stage).subscribe((o) => out.push(o));
    expect(letters(out)).toBe('FFs');
    expect(openai.requests[0]).toBe(request);
    expect(anthropic.requests[0]).toEqual({ ...request, model: claude, apiKey: undefined });
    expect('apiKey' in anthropic.requests[0]!).toBe(false);
    expect(google.requests[0]).toEqual({ ...request, model: gemini, apiKey: 'g-key' });
    expect(google.requests[0]!.messages).toBe(request.messages);
    // A request built for another model than the chain's first is sent to the chain's model.
    const first = provider(() => throwError(() => new ProviderError('auth', 'no')));
    of(withRequest).pipe(callModelWithFallback({ models: [{ model: claude, provider: first }] })).subscribe();
    expect(first.requests[0]).toEqual({ ...request, model: claude, apiKey: undefined });
  });

  it('names every model\'s failure when the last one fails too, and keeps the kind of the last error', () => {
    const out: LoopOutput[] = [];
    scheduler().run(({ cold, flush }) => {
      const openai = provider(() => cold('-#', {}, ProviderError.rateLimited('slow down')));
      const anthropic = provider(() => cold('-#', {}, ProviderError.network('socket hang up')));
      const stage = callModelWithFallback({ models: [{ model: gpt, provider: openai }, { model: claude, provider: anthropic }], retry: { maxRetries: 0 } });
      cold('s|', { s: withRequest }).pipe(stage, tap((o) => out.push(o))).subscribe();
      flush();
    });
    expect(letters(out)).toBe('Fs');
    const error = (out[1] as LoopState).failure!.error as ProviderError;
    expect(error).toBeInstanceOf(ProviderError);
    expect(error.kind).toBe('network');
    expect(error.message).toBe('Every model that took this turn failed: openai/gpt: rateLimited: slow down; anthropic/claude: network: socket hang up');
  });

  it('does not fall back on an error another model would meet too (auth, bad request) or on a cancelled call', () => {
    for (const error of [new ProviderError('auth', 'bad key', { status: 401 }), new ProviderError('api', 'bad request', { status: 400 }), new ProviderError('cancelled', 'cut'), new Error('boom')]) {
      const out: LoopOutput[] = [];
      const anthropic = provider();
      scheduler().run(({ cold, flush }) => {
        const openai = provider(() => cold('-#', {}, error));
        cold('s|', { s: withRequest }).pipe(callModelWithFallback({ models: [{ model: gpt, provider: openai }, { model: claude, provider: anthropic }] }), tap((o) => out.push(o))).subscribe();
        flush();
      });
      expect(letters(out)).toBe('s');
      expect((out[0] as LoopState).failure).toEqual({ error, model: { id: 'gpt', provider: 'openai' } });
      expect(anthropic.requests).toHaveLength(0);
    }
    expect(fallbackReason(ProviderError.network('x'))).toBe('retriesExhausted');
    expect(fallbackReason(new ProviderError('contextOverflow', 'x'))).toBe('contextOverflow');
  });

  it('falls back at once from an open circuit (it fails fast, not retried)', () => {
    const out: LoopOutput[] = [];
    scheduler().run(({ cold, flush }) => {
      // Without the breaker the retry would get this provider's answer; with it open, the call fails fast.
      const flaky = provider(() => cold('-#', {}, ProviderError.network('down')), () => cold('-s-t-d|', parts(gpt)));
      const guarded = withCircuitBreaker(flaky, { failureThreshold: 1, openDurationMs: 1000 });
      const anthropic = provider(() => cold('-s-t-d|', parts(claude)));
      const stage = callModelWithFallback({
        models: [{ model: gpt, provider: guarded }, { model: claude, provider: anthropic }],
        retry: { maxRetries: 3, initialDelayMs: 10, jitter: 0 },
      });
      cold('s|', { s: withRequest }).pipe(stage, tap((o) => out.push(o))).subscribe();
      flush();
    });
    expect(letters(out)).toBe('rFaues');
    expect(out[1]).toMatchObject({ reason: 'circuitOpen', errorMessage: expect.stringMatching(/^circuitOpen: Circuit open/), timestamp: 11 });
    expect((out[5] as LoopState).assistant).toMatchObject({ model: 'claude' });
  });

  it('stays on the fallback for later calls of the same stage; a new stage starts with the primary', () => {
    const out: LoopOutput[] = [];
    const openai = provider(() => throwError(() => ProviderError.network('down')), () => throwError(() => new Error('not called')));
    const anthropic = provider(() => throwError(() => ProviderError.rateLimited('x')));
    scheduler().run(({ cold, flush }) => {
      const anthropicOk = provider(() => cold('-s-t-d|', parts(claude)), () => cold('-s-t-d|', parts(claude)));
      const stage = callModelWithFallback({ models: [{ model: gpt, provider: openai }, { model: claude, provider: anthropicOk }], retry: { maxRetries: 0 } });
      cold('s---------s|', { s: withRequest }).pipe(stage, tap((o) => out.push(o))).subscribe();
      flush();
      expect(openai.requests).toHaveLength(1);
      expect(anthropicOk.requests).toHaveLength(2);
    });
    expect(letters(out)).toBe('Faues' + 'aues');
    // A new stage (a new run) asks the primary first again.
    const fresh = callModelWithFallback({ models: [{ model: gpt, provider: openai }, { model: claude, provider: anthropic }], retry: { maxRetries: 0 } });
    scheduler().run(({ cold, flush }) => {
      cold('s|', { s: withRequest }).pipe(fresh).subscribe();
      flush();
    });
    expect(openai.requests).toHaveLength(2);
  });

  it('remembers where the chain stands per run (the state\'s run): another run of the same stage starts with the primary', () => {
    const out: LoopOutput[] = [];
    const openai = provider(() => throwError(() => ProviderError.network('down')), () => throwError(() => ProviderError.network('down again')));
    scheduler().run(({ cold, flush }) => {
      const anthropicOk = provider(() => cold('-s-t-d|', parts(claude)), () => cold('-s-t-d|', parts(claude)), () => cold('-s-t-d|', parts(claude)));
      const stage = callModelWithFallback({ models: [{ model: gpt, provider: openai }, { model: claude, provider: anthropicOk }], retry: { maxRetries: 0 } });
      const runA = { ...withRequest, run: { agentId: 'A', sessionId: 'S', firstTrigger: 'user' as const } };
      const runB = { ...withRequest, loopId: 'L2', run: { agentId: 'B', sessionId: 'S', firstTrigger: 'user' as const } };
      cold('a---------b---------a|', { a: runA, b: runB }).pipe(stage, tap((o) => out.push(o))).subscribe();
      flush();
      // A: primary fails, fallback answers; B: primary first again (fails), fallback; A again: straight to the fallback.
      expect(openai.requests).toHaveLength(2);
      expect(anthropicOk.requests).toHaveLength(3);
    });
    expect(letters(out)).toBe('Faues' + 'Faues' + 'aues');
  });

  it('falls back on a context overflow only once overflowFallsBack() says so (the loop\'s compaction retry comes first)', () => {
    let recovered = false;
    const out: LoopOutput[] = [];
    scheduler().run(({ cold, flush }) => {
      const overflow = new ProviderError('contextOverflow', 'prompt is too long');
      const openai = provider(() => cold('-#', {}, overflow), () => cold('-#', {}, overflow));
      const anthropic = provider(() => cold('-s-t-d|', parts(claude)));
      const stage = callModelWithFallback({
        models: [{ model: gpt, provider: openai }, { model: claude, provider: anthropic }],
        overflowFallsBack: () => recovered,
      });
      cold('s-----s|', { s: withRequest }).pipe(stage, tap((o) => {
        out.push(o);
        if (o.type === 'LoopState') recovered = true;
      })).subscribe();
      flush();
    });
    expect(letters(out)).toBe('s' + 'Faues');
    expect((out[0] as LoopState).failure!.error).toMatchObject({ kind: 'contextOverflow' });
    expect(out[1]).toMatchObject({ type: 'ModelFallback', reason: 'contextOverflow' });
  });

  it('after partial output, the next model\'s message begins with a MessageReset instead of a second MessageStart', () => {
    const out: LoopOutput[] = [];
    scheduler().run(({ cold, flush }) => {
      const openai = provider(() => cold('-s-t-#', parts(gpt), ProviderError.network('reset')));
      const anthropic = provider(() => cold('-s-t-d|', parts(claude)));
      cold('s|', { s: withRequest })
        .pipe(callModelWithFallback({ models: [{ model: gpt, provider: openai }, { model: claude, provider: anthropic }], retry: { maxRetries: 0 } }), tap((o) => out.push(o)))
        .subscribe();
      flush();
    });
    expect(letters(out)).toBe('auFwues');
    expect(out[3]).toMatchObject({ type: 'MessageReset', reason: 'modelFallback', message: emptyAssistant('claude', 'anthropic', 0) });
  });

  it('keeps the open message of an earlier model as the one to close when the last model fails before streaming', () => {
    const out: LoopOutput[] = [];
    scheduler().run(({ cold, flush }) => {
      const openai = provider(() => cold('-s-t-#', parts(gpt), ProviderError.network('reset')));
      const anthropic = provider(() => cold('-#', {}, ProviderError.network('down')));
      cold('s|', { s: withRequest })
        .pipe(callModelWithFallback({ models: [{ model: gpt, provider: openai }, { model: claude, provider: anthropic }], retry: { maxRetries: 0 } }), tap((o) => out.push(o)))
        .subscribe();
      flush();
    });
    expect(letters(out)).toBe('auFs');
    expect((out[3] as LoopState).partial).toMatchObject({ model: 'gpt', content: [{ type: 'text', text: 'Hi' }] });
  });

  it('asks getApiKey for a fallback\'s key; one that throws is reported as a HookError and the model\'s own key is used', async () => {
    const run = async (getApiKey: (m: ModelConfig) => Promise<string>): Promise<{ out: LoopOutput[]; sent: StreamRequest }> => {
      const openai = provider(() => throwError(() => ProviderError.network('down')));
      const google = provider(() => throwError(() => new ProviderError('auth', 'no')));
      const stage = callModelWithFallback({ models: [{ model: gpt, provider: openai }, { model: gemini, provider: google }], retry: { maxRetries: 0 }, getApiKey });
      const out = await lastValueFrom(of(withRequest).pipe(stage, toArray()));
      return { out, sent: google.requests[0]! };
    };
    const asked: string[] = [];
    const vault = await run((m) => (asked.push(m.id), Promise.resolve(`vault-${m.id}`)));
    expect(asked).toEqual(['gemini']);
    expect(vault.sent.apiKey).toBe('vault-gemini');
    expect(letters(vault.out)).toBe('Fs');
    const broken = await run(() => Promise.reject(new Error('vault down')));
    expect(broken.sent.apiKey).toBe('g-key');
    expect(letters(broken.out)).toBe('FHs');
    expect(broken.out[1]).toMatchObject({ type: 'HookError', loopId: 'L1', hook: 'getApiKey', message: 'vault down' });
  });
});
