import { asyncScheduler, type MonoTypeOperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import type { AgentEvent } from '../../types/events.js';
import { type AssistantMessage, withTurnId } from '../../types/message.js';
import type { Provider, ProviderOptions, StreamEvent, StreamRequest } from '../../types/provider.js';
import { DEFAULT_RETRY_CONFIG, type RetryConfig } from '../../types/config.js';
import type { ProviderError } from '../../types/errors.js';
import { onAbort } from '../../sources/cancellation.js';
import { callProvider, providerCall, streamBreach } from '../../operators/guard-provider-stream.js';
import { retryDelay } from '../../operators/retry-backoff.js';
import { RetryResumer } from '../../operators/internal/retry-resumer.js';
import { MessageEvents, type ToMessageEventsOptions } from '../../operators/to-message-events.js';
import { directStage, type LoopStage, type LoopState, type StageSink } from '../kernel/loop-state.js';
import { copyState } from '../kernel/state-with.js';

export interface CallModelOptions {
  provider: Provider;
  /** Backoff for rateLimited / network errors (`retryBackoff`); `{ maxRetries: 0 }` disables retries. */
  retry?: Partial<RetryConfig>;
  /** Randomness for retry jitter. */
  random?: () => number;
  /** Clock for timestamps and retry delays (default asyncScheduler). */
  scheduler?: SchedulerLike;
  /** Handed to the provider; aborting it also cuts the stream (the state then has no `assistant`). Default: the state's `run.signal`. */
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
  const setup: CallSetup = {
    options,
    scheduler,
    providerOptions: options.signal ? { signal: options.signal, scheduler } : { scheduler },
    retry: { ...DEFAULT_RETRY_CONFIG, ...options.retry },
    random: options.random ?? Math.random,
    // With retries, a retry resumes where the last attempt broke (resumeRetry).
    resuming: (options.retry?.maxRetries ?? DEFAULT_RETRY_CONFIG.maxRetries) > 0,
    now: () => scheduler.now(),
  };
  return directStage((state, sink) => {
    const request = state.request;
    if (state.ended || !request) return sink.done(state);
    try {
      return new ModelCall(setup, state, request, sink).start();
    } catch (error) {
      return sink.error(error);
    }
  });
}

/** What every call of one `callModel` stage shares. */
interface CallSetup {
  readonly options: CallModelOptions;
  readonly scheduler: SchedulerLike;
  readonly providerOptions: ProviderOptions;
  readonly retry: RetryConfig;
  readonly random: () => number;
  readonly resuming: boolean;
  readonly now: () => number;
  /** The message events' options of the run last called (one per run, not one per call). */
  events?: ToMessageEventsOptions;
}

/**
 * One model call, from the request to the state it leaves. The stream's events go through the
 * guard, the resumption of a retry and the mapping to message events as plain method calls: one
 * subscriber between the provider and the run, not one per operator for every delta (the
 * operators callProvider, markAttempt + retryBackoff + resumeRetry and toMessageEvents do the same,
 * step by step). It is the stream's observer itself, so a call allocates one object, not a closure
 * per callback.
 */
class ModelCall {
  private partial: AssistantMessage | undefined;
  private assistant: AssistantMessage | undefined;
  private finished = false;
  private attempts = 0;
  private streamDone = false;
  private inner: Subscription | undefined;
  private pause: Subscription | undefined;
  private stopWaiting: (() => void) | undefined;
  /** Whether each event is checked here (no stream operator of the user's), and the index of the next one. */
  private checked = false;
  private index = 0;
  private readonly events: MessageEvents;
  private readonly resume: RetryResumer | undefined;
  /** The stage's signal, else the run's; and what the provider is handed with it. */
  private readonly signal: AbortSignal | undefined;
  private readonly providerOptions: ProviderOptions;

  constructor(
    private readonly setup: CallSetup,
    private readonly state: LoopState,
    private readonly request: StreamRequest,
    private readonly sink: StageSink,
  ) {
    if (setup.events?.loopId !== state.loopId) setup.events = { loopId: state.loopId, now: setup.now };
    this.events = new MessageEvents(setup.events, this);
    this.resume = setup.resuming ? new RetryResumer(this.events) : undefined;
    const runSignal = setup.options.signal === undefined ? state.run?.signal : undefined;
    this.signal = runSignal ?? setup.options.signal;
    this.providerOptions = runSignal ? { signal: runSignal, scheduler: setup.scheduler } : setup.providerOptions;
  }

  start(): () => void {
    // An abort cuts the stream (or the wait for a retry): the state then has no `assistant`.
    const signal = this.signal;
    if (signal && !signal.aborted) {
      this.stopWaiting = onAbort(signal, () => {
        this.cut();
        this.settle();
      });
    }
    if (signal?.aborted) this.settle();
    else this.attempt();
    return () => {
      this.stopWaiting?.();
      this.cut();
    };
  }

  /** A message event: the last snapshot and the final message are kept for the state. */
  messageEvent(event: AgentEvent): void {
    if (event.type === 'MessageEnd') {
      if (this.setup.options.tagTurn) {
        const { loopId, turnIndex } = this.state;
        event = { ...event, message: withTurnId(event.message as AssistantMessage, { loopId, turnIndex }) };
      }
      this.partial = this.assistant = event.message as AssistantMessage;
    } else this.partial = (event as { message: AssistantMessage }).message;
    this.sink.event(event);
  }

  private attempt(): void {
    this.resume?.attempt();
    const { options } = this.setup;
    const providerOptions = this.providerOptions;
    // A stream operator of the user's sees the guarded stream; without one, each event is checked here.
    this.checked = !options.providerStream;
    this.index = 0;
    const stream$ = options.providerStream
      ? callProvider(options.provider, this.request, providerOptions).pipe(options.providerStream)
      : providerCall(options.provider, this.request, providerOptions);
    this.inner = stream$.subscribe(this);
    // Cut while subscribing (an abort from within the provider): nothing more of this stream.
    if (this.finished && !this.streamDone) this.inner.unsubscribe();
  }

  /** The stream's events (the call is the stream's observer). */
  next(event: unknown): void {
    if (this.finished) return;
    const breach = this.checked ? streamBreach(event, this.index++) : undefined;
    if (breach) {
      this.inner?.unsubscribe(); // what follows a breach is not read
      return this.error(breach);
    }
    const e = event as StreamEvent;
    if (e.type === 'done') this.streamDone = true;
    try {
      const resume = this.resume;
      if (resume === undefined || resume.passes(e)) this.events.push(e);
      else resume.push(e);
    } catch (error) {
      // A throw downstream fails the call as any operator's would: kept as the state's failure.
      this.streamDone = false;
      this.cut();
      return this.settle(this.failure(error));
    }
    // `done` is final: whatever the source sends after it is ignored, and it may drain on its own.
    if (this.streamDone) this.settle();
  }

  /** The stream failed: retried after a delay when the error and the budget allow, else the call's failure. */
  error(error: unknown): void {
    if (this.finished) return;
    const { retry, random, scheduler, now } = this.setup;
    const delayMs = retryDelay(retry, this.attempts + 1, error, random);
    if (delayMs === undefined) return this.settle(this.failure(error));
    this.attempts++;
    const e = error as ProviderError;
    const model = { provider: this.request.model.provider, id: this.request.model.id };
    this.sink.event({ type: 'RetryScheduled', loopId: this.state.loopId, attempt: this.attempts, delayMs, errorKind: e.kind, errorMessage: e.message, model, timestamp: now() });
    this.pause = scheduler.schedule(() => this.attempt(), delayMs);
  }

  complete(): void {
    this.settle();
  }

  /** A failure names the model it went to (id and provider only). */
  private failure(error: unknown): LoopState['failure'] {
    return { error, model: { id: this.request.model.id, provider: this.request.model.provider } };
  }

  private cut(): void {
    this.pause?.unsubscribe();
    if (!this.streamDone) this.inner?.unsubscribe();
  }

  private settle(failure?: LoopState['failure']): void {
    if (this.finished) return;
    this.finished = true;
    this.stopWaiting?.();
    const state = this.state;
    const next = copyState(state);
    next.request = undefined;
    next.partial = this.partial ?? state.partial;
    next.assistant = this.assistant ?? state.assistant;
    next.failure = failure;
    this.sink.done(next);
  }
}
