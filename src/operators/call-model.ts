import {
  asyncScheduler, identity, type MonoTypeOperatorFunction, NEVER, type OperatorFunction, type SchedulerLike,
  takeUntil,
} from 'rxjs';
import type { AgentEvent } from '../types/events.js';
import type { AssistantMessage, LlmMessage } from '../types/message.js';
import type { Provider, ProviderOptions, StreamEvent } from '../types/provider.js';
import { DEFAULT_RETRY_CONFIG, type RetryConfig } from '../types/config.js';
import { fromAbortSignal } from '../sources/cancellation.js';
import { callProvider } from './guard-provider-stream.js';
import { retryBackoff } from './retry-backoff.js';
import { type AttemptMark, markAttempt, resumeRetry } from './resume-retry.js';
import { toMessageEvents } from './to-message-events.js';
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
  const retries = (options.retry?.maxRetries ?? DEFAULT_RETRY_CONFIG.maxRetries) > 0;
  const abort$ = options.signal ? fromAbortSignal(options.signal) : NEVER;
  const now = (): number => scheduler.now();
  return stateByState((state, subscriber, done) => {
    const request = state.request;
    if (state.ended || !request) {
      subscriber.next(state);
      return done();
    }
    let partial: AssistantMessage | undefined;
    let assistant: AssistantMessage | undefined;
    const settled = (failure?: LoopState['failure']): LoopState => {
      const { request: _sent, failure: _earlier, ...rest } = state;
      const next: LoopState = { ...rest, ...(partial ? { partial } : {}), ...(assistant ? { assistant } : {}) };
      return failure ? { ...next, failure } : next;
    };
    const stream$ = callProvider(options.provider, request, providerOptions).pipe(
      options.providerStream ?? identity,
      // With retries, each attempt is marked so that a retry resumes where the last one broke.
      retries ? markAttempt<StreamEvent>() : (identity as OperatorFunction<StreamEvent, StreamEvent | AttemptMark>),
      retryBackoff<StreamEvent | AttemptMark>(options.retry ?? {}, {
        scheduler,
        ...(options.random ? { random: options.random } : {}),
        onRetry: (attempt, delayMs, error) =>
          subscriber.next({
            type: 'RetryScheduled', loopId: state.loopId, attempt, delayMs, errorKind: error.kind, errorMessage: error.message, timestamp: now(),
          }),
      }),
      options.signal ? takeUntil<StreamEvent | AttemptMark>(abort$) : identity,
      retries ? resumeRetry() : (identity as OperatorFunction<StreamEvent | AttemptMark, StreamEvent>),
      toMessageEvents({ loopId: state.loopId, now }),
    );
    const subscription = stream$.subscribe({
      next: (event: AgentEvent) => {
        if (event.type === 'MessageStart' || event.type === 'MessageUpdate' || event.type === 'MessageReset') partial = event.message as AssistantMessage;
        else if (event.type === 'MessageEnd') {
          if (options.tagTurn) event = { ...event, message: { ...(event.message as AssistantMessage), turnId: { loopId: state.loopId, turnIndex: state.turnIndex } } as LlmMessage };
          partial = assistant = event.message as AssistantMessage;
        }
        subscriber.next(event);
      },
      error: (error: unknown) => {
        subscriber.next(settled({ error, model: { id: request.model.id, provider: request.model.provider } }));
        done();
      },
      complete: () => {
        subscriber.next(settled());
        done();
      },
    });
    return () => subscription.unsubscribe();
  });
}
