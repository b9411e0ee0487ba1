import { asyncScheduler, concatMap, defer, from, of, type SchedulerLike } from 'rxjs';
import type { AgentEvent, AgentStartEvent } from '../../types/events.js';
import type { ContinuationKind } from '../../types/config.js';
import type { LoopHooks } from '../../types/hooks.js';
import { AgentError, errorMessage } from '../../types/errors.js';
import { callHookSafely } from '../../sources/hook-result.js';
import { hookError } from '../kernel/ask-hook.js';
import { type LoopOutput, type LoopStage, loopStage, type LoopState } from '../kernel/loop-state.js';
import { stateWith } from '../kernel/state-with.js';

/** What every `startRun` is given, whichever way it gets its ids. */
export interface StartRunCommonOptions {
  /** This and the next two default to the state's `run` (when neither the options nor `run` name one, there is none). */
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

/** A loop of your own names its agent and session (`AgentStart` needs both). */
export interface StartRunWithIds extends StartRunCommonOptions {
  agentId: string;
  sessionId: string;
  fromRun?: false;
}

/**
 * The ids come from each state's `run` (a state made with `loopState(loopId, history, prompts, run)`,
 * as `agentLoop` makes): one stage serves every run. Ids given here win over the run's.
 */
export interface StartRunFromRun extends StartRunCommonOptions {
  fromRun: true;
  agentId?: string;
  sessionId?: string;
}

/** `startRun`'s options: the ids, or `fromRun: true` to read them from the state's `run`. */
export type StartRunOptions = StartRunWithIds | StartRunFromRun;

/**
 * Opens a run: asks the `beforeLoop` hook, then emits `AgentStart` (every run's first event), then
 * the `HookError` of a hook that threw or failed (it then counts as going on). A veto (`false`)
 * emits nothing and ends the run (`ended: 'userStop'`): the run's `AgentEnd` is its only event.
 * A state whose run has ended passes through.
 *
 * Contract: per input state, `AgentStart` (and a HookError), then the state; or, vetoed, the
 * state with `ended: 'userStop'`. The ids come from the options (`{ agentId, sessionId }`), else,
 * with `fromRun: true`, from the state's `run` (what `agentLoop` sets): one `startRun({ fromRun: true })`
 * serves every run. Neither names an agent and a session: the stage fails with an AgentError (`InvalidConfig`).
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
export function startRun(given: StartRunOptions): LoopStage {
  // Called from JavaScript with nothing: the stage says what is missing when a state comes without a run.
  const options: GivenOptions = (given as StartRunOptions | undefined) ?? {};
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

/** The options as the stage reads them: ids from either form. */
type GivenOptions = StartRunCommonOptions & { agentId?: string; sessionId?: string };

function agentStart(state: LoopState, o: GivenOptions, timestamp: number): AgentStartEvent {
  const run = state.run;
  const agentId = o.agentId ?? run?.agentId;
  const sessionId = o.sessionId ?? run?.sessionId;
  if (agentId === undefined || sessionId === undefined) {
    throw new AgentError('InvalidConfig', `startRun: no ${agentId === undefined ? 'agentId' : 'sessionId'}: pass { agentId, sessionId } in the options, or { fromRun: true } over a state whose run names it (loopState(loopId, messages, pending, run))`);
  }
  const parentLoopId = o.parentLoopId ?? run?.parentLoopId;
  const parentToolCallId = o.parentToolCallId ?? run?.parentToolCallId;
  const continuationKind = o.continuationKind ?? run?.continuationKind;
  return {
    type: 'AgentStart',
    agentId,
    sessionId,
    loopId: state.loopId,
    ...(parentLoopId ? { parentLoopId } : {}),
    ...(parentToolCallId ? { parentToolCallId } : {}),
    ...(continuationKind ? { continuationKind } : {}),
    timestamp,
    ...(o.metadata !== undefined ? { metadata: o.metadata } : {}),
  };
}
