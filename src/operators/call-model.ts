import { asyncScheduler, type MonoTypeOperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import type { AgentEvent } from '../types/events.js';
import type { AssistantMessage, LlmMessage } from '../types/message.js';
import type { Provider, ProviderOptions, StreamEvent } from '../types/provider.js';
import { DEFAULT_RETRY_CONFIG, type RetryConfig } from '../types/config.js';
import type { ProviderError } from '../types/errors.js';
import { onAbort } from '../sources/cancellation.js';
import { callProvider, providerCall, streamGuard } from './guard-provider-stream.js';
import { retryDelay } from './retry-backoff.js';
import { resumer } from './resume-retry.js';
import { messageEventsOf } from './to-message-events.js';
import { type LoopStage, type LoopState, stateByState } from './loop-state.js';

export interface CallModelOptions {
  provider: Provider;
  /** Backoff for rateLimited / network errors (`retryBackoff`); `{ maxRetries: 0 }` disables retries. */
  retry?: Partial<RetryConfig>;
  /** Randomness for retry jitter. */
  random?: () => number;
  /** Clock for timestamps and retry delays (default asyncScheduler). */
  scheduler?: SchedulerLike;
  /** Handed to the provider; aborting it also cuts the stream (the state then has no `assistant`). */
  signal?: AbortSignal;
  /** Applied to the provider's raw stream, before retries (a circuit breaker, a log ...). */
  providerStream?: MonoTypeOperatorFunction<StreamEvent>;
  /** The final message carries its turn (`turnId`) from its MessageEnd on, as the loop records it. */
  tagTurn?: boolean;
}

/**
 * The loop's model-call stage: sends the state's `request` to the provider, retries rate limits and
 * network errors with `retryBackoff` (each retry announced with `RetryScheduled`, a retry that
 * diverges from what was shown with `MessageReset`), and turns the stream into message events
 * (`toMessageEvents`). A failure that outlives its retries does not fail the stage: it is handed on
 * in the state, with the message as far as it streamed, for the next stage to recover or report.
 * A state without a request, or whose run has ended, passes through untouched.
 *
 * Contract: per input state, the message events of the call, then the state with `partial` (the
 * last snapshot), `assistant` (the final message, if the stream delivered one) and `failure` (if it
 * failed) set, and `request` cleared.
 *
 * ```
 * source:    --s------------|        (s: a state with a request)
 * callModel({ provider })
 * output:    --a-u-u-e(s')--|        (a: MessageStart, u: MessageUpdate, e: MessageEnd, s': { ...s, assistant })
 * ```
 *
 * @example
 * of({ ...loopState('loop-1', history), request }).pipe(callModel({ provider: openai, retry: { maxRetries: 2 } }))
 *   .subscribe((out) => (isLoopState(out) ? console.log(out.assistant) : render(out)));
 */
export function callModel(options: CallModelOptions): LoopStage {
  const scheduler = options.scheduler ?? asyncScheduler;
  const providerOptions: ProviderOptions = options.signal ? { signal: options.signal, scheduler } : { scheduler };
  const retry: RetryConfig = { ...DEFAULT_RETRY_CONFIG, ...options.retry };
  const random = options.random ?? Math.random;
  // With retries, a retry resumes where the last attempt broke (resumeRetry).
  const resuming = (options.retry?.maxRetries ?? DEFAULT_RETRY_CONFIG.maxRetries) > 0;
  const now = (): number => scheduler.now();
  return stateByState((state, subscriber, done) => {
    const request = state.request;
    if (state.ended || !request) {
      subscriber.next(state);
      return done();
    }
    let partial: AssistantMessage | undefined;
    let assistant: AssistantMessage | undefined;
    let finished = false;
    const settle = (failure?: LoopState['failure']): void => {
      if (finished) return;
      finished = true;
      stopWaiting?.();
      subscriber.next({ ...state, request: undefined, partial: partial ?? state.partial, assistant: assistant ?? state.assistant, failure });
      done();
    };
    // The stream's events go through the guard, the resumption of a retry and the mapping to
    // message events as plain function calls: one subscriber between the provider and the run,
    // not one per operator for every delta (the operators callProvider, markAttempt + retryBackoff
    // + resumeRetry and toMessageEvents do the same, step by step).
    const toEvents = messageEventsOf({ loopId: state.loopId, now }, (event: AgentEvent) => {
      if (event.type === 'MessageEnd') {
        if (options.tagTurn) event = { ...event, message: { ...(event.message as AssistantMessage), turnId: { loopId: state.loopId, turnIndex: state.turnIndex } } as LlmMessage };
        partial = assistant = event.message as AssistantMessage;
      } else partial = (event as { message: AssistantMessage }).message;
      subscriber.next(event);
    });
    // A failure names the model it went to (id and provider only).
    const failure = (error: unknown): LoopState['failure'] => ({ error, model: { id: request.model.id, provider: request.model.provider } });
    const resume = resuming ? resumer(toEvents) : undefined;
    const deliver = resume ? resume.push : toEvents;
    let attempts = 0;
    let streamDone = false;
    let inner: Subscription | undefined;
    let pause: Subscription | undefined;
    const failed = (error: unknown): void => {
      if (finished) return;
      const delayMs = retryDelay(retry, attempts + 1, error, random);
      if (delayMs === undefined) return settle(failure(error));
      attempts++;
      const e = error as ProviderError;
      subscriber.next({ type: 'RetryScheduled', loopId: state.loopId, attempt: attempts, delayMs, errorKind: e.kind, errorMessage: e.message, timestamp: now() });
      pause = scheduler.schedule(attempt, delayMs);
    };
    const attempt = (): void => {
      resume?.attempt();
      // A stream operator of the user's sees the guarded stream; without one, each event is checked here.
      const check = options.providerStream ? undefined : streamGuard();
      const stream$ = options.providerStream
        ? callProvider(options.provider, request, providerOptions).pipe(options.providerStream)
        : providerCall(options.provider, request, providerOptions);
      inner = stream$.subscribe({
        next: (event: unknown) => {
          if (finished) return;
          const breach = check?.(event);
          if (breach) {
            inner?.unsubscribe(); // what follows a breach is not read
            return failed(breach);
          }
          const e = event as StreamEvent;
          if (e.type === 'done') streamDone = true;
          try {
            deliver(e);
          } catch (error) {
            // A throw downstream fails the call as any operator's would: kept as the state's failure.
            streamDone = false;
            cut();
            return settle(failure(error));
          }
          // `done` is final: whatever the source sends after it is ignored, and it may drain on its own.
          if (streamDone) settle();
        },
        error: failed,
        complete: () => settle(),
      });
      // Cut while subscribing (an abort from within the provider): nothing more of this stream.
      if (finished && !streamDone) inner.unsubscribe();
    };
    const cut = (): void => {
      pause?.unsubscribe();
      if (!streamDone) inner?.unsubscribe();
    };
    // An abort cuts the stream (or the wait for a retry): the state then has no `assistant`.
    const signal = options.signal;
    const stopWaiting = signal && !signal.aborted ? onAbort(signal, () => {
      cut();
      settle();
    }) : undefined;
    if (signal?.aborted) settle();
    else attempt();
    return () => {
      stopWaiting?.();
      cut();
    };
  });
}
