import { asyncScheduler, concatMap, defer, from, of, type SchedulerLike } from 'rxjs';
import type { AgentEvent, AgentStartEvent } from '../types/events.js';
import type { ContinuationKind } from '../types/config.js';
import type { LoopHooks } from '../types/hooks.js';
import { errorMessage } from '../types/errors.js';
import { callHookSafely } from '../sources/hook-result.js';
import { hookError } from './ask-hook.js';
import { type LoopOutput, type LoopStage, loopStage, type LoopState } from './loop-state.js';
import { stateWith } from './state-with.js';

export interface StartRunOptions {
  agentId: string;
  sessionId: string;
  parentLoopId?: string;
  parentToolCallId?: string;
  continuationKind?: ContinuationKind;
  /** Carried on AgentStart. */
  metadata?: unknown;
  /** Asked first, with the context and loop index 0: `false` vetoes the run (no AgentStart; `ended: 'userStop'`). */
  beforeLoop?: LoopHooks['beforeLoop'];
  /** Clock for the events' timestamps (default asyncScheduler). */
  scheduler?: SchedulerLike;
}

/**
 * Opens a run: asks the `beforeLoop` hook, then emits `AgentStart` (every run's first event), then
 * the `HookError` of a hook that threw or failed (it then counts as going on). A veto (`false`)
 * emits nothing and ends the run (`ended: 'userStop'`): the run's `AgentEnd` is its only event.
 * A state whose run has ended passes through.
 *
 * Contract: per input state, `AgentStart` (and a HookError), then the state; or, vetoed, the
 * state with `ended: 'userStop'`.
 *
 * ```
 * source:   --s-------|          (the hook throws)
 * startRun({ agentId, sessionId, beforeLoop })
 * output:   --(ahs)---|          (a: AgentStart, h: HookError beforeLoop)
 * ```
 *
 * @example
 * of(loopState('loop-1', history)).pipe(loopStages(startRun({ agentId: 'a', sessionId: 's' }), admitPrompts([userMessage('hi')]), repeatTurns(turn), endRun()));
 */
export function startRun(options: StartRunOptions): LoopStage {
  const scheduler = options.scheduler ?? asyncScheduler;
  const { beforeLoop } = options;
  const opened = (state: LoopState, failure?: AgentEvent): LoopOutput[] =>
    failure ? [agentStart(state, options, scheduler.now()), failure, state] : [agentStart(state, options, scheduler.now()), state];
  return loopStage((state) => {
    if (state.ended) return state;
    if (!beforeLoop) return opened(state);
    return defer(() => {
      let failure: AgentEvent | undefined;
      const report = (e: unknown): void => {
        failure = hookError('beforeLoop', state.loopId, errorMessage(e), scheduler.now());
      };
      return callHookSafely<boolean | void>(() => beforeLoop(state.messages, 0), true, report).pipe(
        concatMap((go) => (go === false ? of<LoopOutput>(stateWith(state, { ended: 'userStop' })) : from(opened(state, failure)))),
      );
    });
  });
}

function agentStart(state: LoopState, o: StartRunOptions, timestamp: number): AgentStartEvent {
  return {
    type: 'AgentStart',
    agentId: o.agentId,
    sessionId: o.sessionId,
    loopId: state.loopId,
    ...(o.parentLoopId ? { parentLoopId: o.parentLoopId } : {}),
    ...(o.parentToolCallId ? { parentToolCallId: o.parentToolCallId } : {}),
    ...(o.continuationKind ? { continuationKind: o.continuationKind } : {}),
    timestamp,
    ...(o.metadata !== undefined ? { metadata: o.metadata } : {}),
  };
}
