import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { AgentEvent } from '../../types/events.js';
import { type AssistantMessage, type StopReason, withTurnId } from '../../types/message.js';
import { errorMessage, isProviderError } from '../../types/errors.js';
import { Usage } from '../../types/usage.js';
import { type LoopOutput, type LoopStage, loopStage, type LoopState, signalOf } from '../kernel/loop-state.js';
import { stateWith } from '../kernel/state-with.js';

export interface SettleCallOptions {
  /** The model asked, named on a message made when the stream left no partial (unless the failure names the model it went to). */
  model: { readonly id: string; readonly provider: string };
  /** The caller's abort signal: a call cut by it settles as `aborted` (default: the state's `run.signal`). */
  signal?: AbortSignal;
  /** Clock for the events' timestamps (default asyncScheduler). */
  scheduler?: SchedulerLike;
  /** The closed message carries its turn (`turnId`), as the loop records it. */
  tagTurn?: boolean;
}

/**
 * Settles a model call that left no final message, so that every turn has exactly one assistant
 * message: the partial as far as it streamed is closed (text and thinking kept, half-streamed tool
 * calls dropped) with `stopReason` `aborted` when the caller's signal is aborted, else `error`, and
 * an `errorMessage` naming the failure (`kind: message` for a provider error) or, with no failure,
 * `other: the provider stream completed without a final message`. A cancelled call whose signal is
 * not aborted settles as the latter. A state that has its message, or has ended, passes through.
 *
 * Contract: per input state, a MessageStart (only when no partial was announced) and a MessageEnd
 * of the closed message, then the state with `assistant` set; `failure` stays, so that a later
 * stage can report it (an `onError` hook).
 *
 * ```
 * source:   --f-----|          (f: a failure after a partial p)
 * settleCall({ model })
 * output:   --(ef')-|          (e: MessageEnd of p closed as an error, f': { ...f, assistant })
 * ```
 *
 * @example
 * state$.pipe(loopStages(buildRequest(request), callModel({ provider }), settleCall({ model }), runToolCalls({ tools }), endTurn()));
 */
export function settleCall(options: SettleCallOptions): LoopStage {
  const scheduler = options.scheduler ?? asyncScheduler;
  return loopStage((state) => {
    if (state.ended || state.assistant) return state;
    const closed = closedPartial(state, options, scheduler.now());
    const message = options.tagTurn ? withTurnId(closed, { loopId: state.loopId, turnIndex: state.turnIndex }) : closed;
    const timestamp = scheduler.now();
    const out: LoopOutput[] = [];
    if (!state.partial) out.push({ type: 'MessageStart', loopId: state.loopId, message, timestamp } satisfies AgentEvent);
    out.push({ type: 'MessageEnd', loopId: state.loopId, message, timestamp }, stateWith(state, { assistant: message }));
    return out;
  });
}

/** The text a settled message carries for a failure (`kind: message` for a provider error). */
export function failureText(error: unknown): string {
  return isProviderError(error) ? `${error.kind}: ${error.message}` : errorMessage(error);
}

/** Whether a failure is the call being cut (by the caller's abort or a cancelled stream), not an error of its own. */
export function isCut(error: unknown, signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true || (isProviderError(error) && error.kind === 'cancelled');
}

function closedPartial(state: LoopState, options: SettleCallOptions, now: number): AssistantMessage {
  const failure = state.failure;
  let stopReason: StopReason = 'error';
  let text = 'other: the provider stream completed without a final message';
  const signal = signalOf(options, state);
  if (signal?.aborted) {
    stopReason = 'aborted';
    text = 'Aborted by the caller.';
  } else if (failure && !isCut(failure.error, signal)) {
    text = failureText(failure.error);
  }
  const p = state.partial;
  // The model the failed call went to (after a fallback, not the configured primary).
  const asked = failure?.model ?? options.model;
  return {
    role: 'assistant',
    content: p ? p.content.filter((c) => c.type !== 'toolCall') : [],
    stopReason,
    model: p?.model ?? asked.id,
    provider: p?.provider ?? asked.provider,
    usage: p ? { ...p.usage } : Usage.empty(),
    timestamp: p?.timestamp ?? now,
    errorMessage: text,
  };
}
