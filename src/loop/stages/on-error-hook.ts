import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { LoopHooks } from '../../types/hooks.js';
import { askHook } from '../kernel/ask-hook.js';
import { failureText, isCut } from './settle-call.js';
import { type LoopStage, loopStage, signalOf } from '../kernel/loop-state.js';

export interface OnErrorHookOptions {
  /** The caller's abort signal: a call cut by it is not an error to report (default: the state's `run.signal`). */
  signal?: AbortSignal;
  /** Clock for the events' timestamps (default asyncScheduler). */
  scheduler?: SchedulerLike;
}

/**
 * Reports a failed model call to an `onError` hook (put it after `settleCall`): when the state has
 * a `failure` that is not the call being cut (an abort, a cancelled stream) and its assistant
 * message settled as `error`, the hook gets the message's error text and the error. A hook that
 * throws or fails emits a `HookError`. Any other state passes through without a call.
 *
 * Contract: per input state, a HookError if the hook failed, then the state, unchanged.
 *
 * ```
 * source:   --f---s---|         (f: a failed call settled as error; s: a call that succeeded)
 * onErrorHook(hook)
 * output:   --f---s---|         (the hook is called once, for f)
 * ```
 *
 * @example
 * const turn = loopStages(startTurn(), buildRequest(request), callModel({ provider }), settleCall({ model }), onErrorHook((text) => log.warn(text)), endTurn());
 */
export function onErrorHook(hook: NonNullable<LoopHooks['onError']>, options: OnErrorHookOptions = {}): LoopStage {
  const scheduler = options.scheduler ?? asyncScheduler;
  return loopStage((state) => {
    const failure = state.failure;
    if (!failure || state.assistant?.stopReason !== 'error' || isCut(failure.error, signalOf(options, state))) return state;
    return askHook<void>('onError', state.loopId, () => hook(failureText(failure.error), failure.error), undefined, scheduler, () => state);
  });
}
