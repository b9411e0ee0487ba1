import { asyncScheduler, map, type Observable, of, type Subscription } from 'rxjs';
import type { AgentEvent, ModelFallbackReason } from '../../types/events.js';
import type { AssistantMessage } from '../../types/message.js';
import type { ModelConfig, Provider, StreamRequest } from '../../types/provider.js';
import type { HookResult } from '../../types/hooks.js';
import { errorMessage, isProviderError, ProviderError } from '../../types/errors.js';
import { callHookSafely } from '../../sources/hook-result.js';
import { callModel, type CallModelOptions } from './call-model.js';
import { failureText, isCut } from './settle-call.js';
import { isLoopState, type LoopStage, type LoopState, stateByState, signalOf } from '../kernel/loop-state.js';
import { keptPerRun } from '../kernel/kept-per-run.js';
import { stateWith } from '../kernel/state-with.js';

/** One model of a fallback chain, with the Provider that serves it. */
export interface ChainedModel {
  readonly model: ModelConfig;
  readonly provider: Provider;
}

export interface CallModelWithFallbackOptions extends Omit<CallModelOptions, 'provider'> {
  /** `[primary, ...fallbacks]`: the first serves until a call fails in a way the next may not. */
  models: readonly ChainedModel[];
  /**
   * Whether a context overflow hands the turn on now, given the state the failed call left (default:
   * always). The loop answers `false` while its one compaction-and-retry is still due, so that only an
   * overflow beyond recovery falls back.
   */
  overflowFallsBack?: (failed: LoopState) => boolean;
  /**
   * The API key of a fallback model, per call (the loop's `getApiKey`); default the model's own
   * `apiKey`. One that throws is reported as a `HookError` (hook `getApiKey`) and the model's own key is used.
   */
  getApiKey?: (model: ModelConfig) => HookResult<string | undefined>;
}

/**
 * Why a failed call may go to the next model: its retries were spent on a retryable error
 * (`rateLimited`, `network`), the endpoint's circuit is open, or the context overflowed. Anything
 * else (auth, a bad request, a cancelled call, a plain Error) would fail on any model, or is the
 * caller's doing: no fallback.
 */
export function fallbackReason(error: unknown): ModelFallbackReason | undefined {
  if (!isProviderError(error)) return undefined;
  if (error.retryable) return 'retriesExhausted';
  if (error.kind === 'circuitOpen') return 'circuitOpen';
  if (error.kind === 'contextOverflow') return 'contextOverflow';
  return undefined;
}

/**
 * The `callModel` stage over a chain of models. A call goes to the current model (at first the
 * primary, `models[0]`); when it fails after its retry budget with a retryable error, or fast with
 * an open circuit, or with a context overflow (once `overflowFallsBack` says so), a
 * `ModelFallback` event announces the next model, which takes the turn with the same request
 * (its `model` and `apiKey` replaced: each Provider translates the history for its API, foreign
 * thinking as text, tool-call ids as its API requires). If the failed call had streamed part of
 * a message, the next model's message begins with a `MessageReset` (reason `modelFallback`)
 * instead of a second `MessageStart`.
 *
 * The chain remembers where it is, per run (the state's `run`; without one, per loop id): later
 * calls go straight to the model that last answered, so a run stays on its fallback,
 * and a new run starts with the primary. When the last model fails too, the state's failure names every model's
 * failure of this turn (`kind` of the last error; `Every model that took this turn failed: a/x: network: …; b/y: …`).
 *
 * ```
 * source:   s|                          (s: a state with a request)
 * callModelWithFallback({ models: [a, b], retry: { maxRetries: 1, initialDelayMs: 10 } })
 *           (a fails with a network error 1 ms into each attempt; b streams one text delta)
 * output:   -r----------Fa-u-(es')|     (r: RetryScheduled, F: ModelFallback a → b at 12,
 *                                        a: MessageStart, u: MessageUpdate, e: MessageEnd of b's message, s': the state)
 * ```
 *
 * @example
 * state$.pipe(callModelWithFallback({
 *   models: [{ model: gpt, provider: openai }, { model: claude, provider: anthropic }],
 *   retry: { maxRetries: 2 },
 * }));
 */
export function callModelWithFallback(options: CallModelWithFallbackOptions): LoopStage {
  const { models, overflowFallsBack = () => true, getApiKey, ...callOptions } = options;
  if (models.length === 0) throw new RangeError('callModelWithFallback: models must name at least one model');
  const scheduler = options.scheduler ?? asyncScheduler;
  const stages = models.map(({ provider }) => callModel({ ...callOptions, provider }));
  // Where the chain stands, per run.
  const chainOf = keptPerRun((): { current: number } => ({ current: 0 }));

  /** The request for model `index` (the request itself when it names that model); a `getApiKey` that throws is reported through `report`. */
  const requestFor = (request: StreamRequest, index: number, loopId: string, report: (event: AgentEvent) => void): Observable<StreamRequest> => {
    const model = models[index]!.model;
    if (request.model.provider === model.provider && request.model.id === model.id && request.model.api === model.api) return of(request);
    const { apiKey: _primaryKey, ...rest } = request; // one provider's key is never sent to another
    const key$ = getApiKey
      ? callHookSafely<string | undefined>(() => getApiKey(model), model.apiKey, (e) =>
          report({ type: 'HookError', loopId, hook: 'getApiKey', message: errorMessage(e), timestamp: scheduler.now() }))
      : of(model.apiKey);
    return key$.pipe(map((apiKey) => (apiKey === undefined ? { ...rest, model } : { ...rest, model, apiKey })));
  };

  return stateByState((state, out, done) => {
    const request = state.request;
    if (state.ended || !request) {
      out.next(state);
      return done();
    }
    const failures: string[] = [];
    let shown: AssistantMessage | undefined; // the partial whose MessageStart is out
    let subscription: Subscription | undefined;

    const attempt = (index: number, from: LoopState): void => {
      let handOn: number | undefined;
      const request$ = requestFor(request, index, state.loopId, (event) => out.next(event)).pipe(map((r): LoopState => ({ ...from, request: r })));
      subscription = stages[index]!(request$).subscribe({
        next: (output) => {
          if (!isLoopState(output)) {
            out.next(shown && output.type === 'MessageStart' ? reset(output.loopId, output.message as AssistantMessage, output.timestamp) : output);
            return;
          }
          const error = output.failure?.error;
          const reason = error === undefined || isCut(error, signalOf(options, state)) ? undefined : fallbackReason(error);
          if (error !== undefined) failures.push(`${modelName(models[index]!.model)}: ${failureText(error)}`);
          if (reason && index + 1 < models.length && (reason !== 'contextOverflow' || overflowFallsBack(output))) {
            shown = output.partial ?? shown;
            out.next(fallbackEvent(state, models[index]!.model, models[index + 1]!.model, reason, error, scheduler.now()));
            handOn = index + 1;
            return;
          }
          chainOf(state).current = index;
          out.next(settled(output, shown, failures));
        },
        error: (e: unknown) => out.error(e),
        complete: () => {
          if (handOn === undefined) return done();
          const { partial: _p, assistant: _a, failure: _f, ...rest } = from;
          attempt(handOn, rest as LoopState);
        },
      });
    };
    attempt(chainOf(state).current, state);
    return () => subscription?.unsubscribe();
  });
}

/** `provider/id`, as errors name a model. */
export function modelName(model: { readonly provider: string; readonly id: string }): string {
  return `${model.provider}/${model.id}`;
}

function reset(loopId: string, message: AssistantMessage, timestamp: number): AgentEvent {
  return { type: 'MessageReset', loopId, message, reason: 'modelFallback', timestamp };
}

function fallbackEvent(state: LoopState, from: ModelConfig, to: ModelConfig, reason: ModelFallbackReason, error: unknown, timestamp: number): AgentEvent {
  return {
    type: 'ModelFallback',
    loopId: state.loopId,
    turnIndex: state.turnIndex,
    from: { provider: from.provider, id: from.id },
    to: { provider: to.provider, id: to.id },
    reason,
    errorMessage: failureText(error),
    timestamp,
  };
}

/** The state a call left: an open message from an earlier model stays the one to close; a failure after fallbacks names them all. */
function settled(state: LoopState, shown: AssistantMessage | undefined, failures: readonly string[]): LoopState {
  const withPartial = shown && !state.partial ? stateWith(state, { partial: shown }) : state;
  const failure = withPartial.failure;
  if (!failure || failures.length < 2) return withPartial;
  const last = failure.error;
  const message = `Every model that took this turn failed: ${failures.join('; ')}`;
  const error = isProviderError(last)
    ? new ProviderError(last.kind, message, { cause: last, ...(last.status !== undefined ? { status: last.status } : {}) })
    : new Error(message, { cause: last });
  return { ...withPartial, failure: { ...failure, error } };
}
