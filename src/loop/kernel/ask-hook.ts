import { concat, concatMap, defer, type Observable, of, type SchedulerLike } from 'rxjs';
import type { AgentEvent } from '../../types/events.js';
import { errorMessage } from '../../types/errors.js';
import type { HookResult } from '../../types/hooks.js';
import { callHookSafely } from '../../sources/hook-result.js';
import type { LoopOutput } from './loop-state.js';
import { asObservable, type StepOutputs } from './loop-state.js';

/**
 * Calls a hook or policy for a stage, safely: its answer (or `fallback`, when it answers
 * `undefined`, throws or fails) is handed to `then`, whose outputs follow. A failure is reported
 * first, as a `HookError` naming the hook. Synchronous and asynchronous answers (Promise,
 * Observable: its first value) alike; the hook is called on subscription.
 *
 * @example
 * askHook('beforeTurn', state.loopId, () => hook(state.messages, state.turnIndex), true, scheduler,
 *   (go) => (go === false ? { ...state, ended: 'userStop' } : state));
 */
export function askHook<T>(
  hook: string,
  loopId: string,
  call: () => HookResult<T | void>,
  fallback: T,
  scheduler: SchedulerLike,
  then: (answer: T) => StepOutputs,
): Observable<LoopOutput> {
  return defer(() => {
    let failure: AgentEvent | undefined;
    const report = (e: unknown): void => {
      failure = hookError(hook, loopId, errorMessage(e), scheduler.now());
    };
    return callHookSafely<T>(call, fallback, report).pipe(
      concatMap((answer) => {
        const outputs = asObservable(then(answer));
        return failure ? concat(of(failure), outputs) : outputs;
      }),
    );
  });
}

/** The `HookError` event of a hook that threw, failed or answered something it may not. */
export function hookError(hook: string, loopId: string, message: string, timestamp: number): AgentEvent {
  return { type: 'HookError', loopId, hook, message, timestamp };
}
