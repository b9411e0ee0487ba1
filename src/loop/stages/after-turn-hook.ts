import { asyncScheduler } from 'rxjs';
import type { LoopHooks } from '../../types/hooks.js';
import { askHook } from '../kernel/ask-hook.js';
import type { TurnHookOptions } from './before-turn-hook.js';
import { type LoopStage, loopStage } from '../kernel/loop-state.js';

/**
 * Calls an `afterTurn` hook with the context and the usage of the turn's assistant message (put
 * it after `endTurn`; it is called on a turn that ended the run too). A hook that throws or fails
 * emits a `HookError`; the run goes on either way. A state with no assistant message passes
 * through without a call. An asynchronous answer (Promise, Observable) is waited for.
 *
 * Contract: per input state, a HookError if the hook failed, then the state, unchanged.
 *
 * ```
 * source:   --s-----|           (the hook throws)
 * afterTurnHook(hook)
 * output:   --(hs)--|           (h: HookError afterTurn)
 * ```
 *
 * @example
 * const turn = loopStages(startTurn(), buildRequest(request), callModel({ provider }), endTurn(), afterTurnHook((_, usage) => meter.add(usage)));
 */
export function afterTurnHook(hook: NonNullable<LoopHooks['afterTurn']>, options: TurnHookOptions = {}): LoopStage {
  const scheduler = options.scheduler ?? asyncScheduler;
  return loopStage((state) => {
    const message = state.assistant;
    if (!message) return state;
    return askHook<void>('afterTurn', state.loopId, () => hook(state.messages, message.usage), undefined, scheduler, () => state);
  });
}
