import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { LoopHooks } from '../../types/hooks.js';
import { askHook } from '../kernel/ask-hook.js';
import { type LoopStage, loopStage } from '../kernel/loop-state.js';
import { stateWith } from '../kernel/state-with.js';

export interface TurnHookOptions {
  /** Clock for the events' timestamps (default asyncScheduler). */
  scheduler?: SchedulerLike;
}

/**
 * Calls a `beforeTurn` hook with the context and the index of the turn about to start (put it
 * before `startTurn`). An answer of `false` ends the run (`ended: 'userStop'`) before the turn
 * starts; a hook that throws or fails emits a `HookError` and the turn goes on. An ended state
 * passes through without a call. An asynchronous answer (Promise, Observable) is waited for.
 *
 * Contract: per input state, a HookError if the hook failed, then the state, with `ended` set if
 * the hook said `false`.
 *
 * ```
 * source:   --s---t----|        (the hook says false for t)
 * beforeTurnHook(hook)
 * output:   --s---t'---|        (t': { ...t, ended: 'userStop' })
 * ```
 *
 * @example
 * const turn = loopStages(beforeTurnHook((messages) => messages.length < 50), startTurn(), buildRequest(request), callModel({ provider }), endTurn());
 */
export function beforeTurnHook(hook: NonNullable<LoopHooks['beforeTurn']>, options: TurnHookOptions = {}): LoopStage {
  const scheduler = options.scheduler ?? asyncScheduler;
  return loopStage((state) => {
    if (state.ended) return state;
    return askHook<boolean | void>('beforeTurn', state.loopId, () => hook(state.messages, state.turnIndex), true, scheduler, (go) =>
      go === false ? stateWith(state, { ended: 'userStop' }) : state,
    );
  });
}
