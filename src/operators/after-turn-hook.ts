import { asyncScheduler, concatMap, from, of } from 'rxjs';
import type { AgentEvent } from '../types/events.js';
import { errorMessage } from '../types/errors.js';
import type { LoopHooks } from '../types/hooks.js';
import { callHookSafely } from '../sources/hook-result.js';
import type { TurnHookOptions } from './before-turn-hook.js';
import type { LoopOutput, LoopStage, LoopState } from './loop-state.js';

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
  return concatMap((state: LoopState) => {
    const message = state.assistant;
    if (!message) return of(state);
    let failure: AgentEvent | undefined;
    const report = (e: unknown): void => {
      failure = { type: 'HookError', loopId: state.loopId, hook: 'afterTurn', message: errorMessage(e), timestamp: scheduler.now() };
    };
    return callHookSafely<void>(() => hook(state.messages, message.usage), undefined, report).pipe(
      concatMap(() => (failure ? from<LoopOutput[]>([failure, state]) : of(state))),
    );
  });
}
