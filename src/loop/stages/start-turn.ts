import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { AgentEvent } from '../../types/events.js';
import type { TurnTrigger } from '../../types/config.js';
import { type AgentMessage, isExtension, withTurnId } from '../../types/message.js';
import { announce, type LoopOutput, type LoopStage, loopStage, type LoopState, recordInto, turnCleared } from '../kernel/loop-state.js';
import { copyState, stateWith } from '../kernel/state-with.js';

export interface TurnBoundsOptions {
  /** Clock for the events' timestamps (default asyncScheduler). */
  scheduler?: SchedulerLike;
}

export interface StartTurnOptions extends TurnBoundsOptions {
  /** What turn 0 is triggered by (`TurnStart.triggeredBy`; default: the state's `run.firstTrigger`, else `user`); later turns are `continuation`. */
  firstTrigger?: TurnTrigger;
}

export interface EndTurnOptions extends TurnBoundsOptions {
  /** The message and the results are already in `messages` (`recordAssistant`, `recordToolResults` ran): only TurnEnd and the turn index. */
  recorded?: boolean;
}

/**
 * Opens a turn: `TurnStart`, then the state's `pending` messages enter the context (each tagged
 * with the turn and announced with MessageStart / MessageEnd), and last turn's model call and tool
 * results are cleared. A state whose run has ended passes through untouched.
 *
 * Contract: per input state, TurnStart and a MessageStart/MessageEnd pair per pending message, then
 * the state with `pending` moved into `messages` and `request`, `partial`, `assistant`, `failure`,
 * `toolResults` and `stopRequested` cleared.
 *
 * ```
 * source:   --s--------|          (s: turnIndex 0, one pending prompt p)
 * startTurn()
 * output:   --(tabs')--|          (t: TurnStart 0, a/b: MessageStart/End of p, s': messages + p)
 * ```
 *
 * @example
 * of(loopState('loop-1', [], [userMessage('hi')])).pipe(startTurn()).subscribe(console.log);
 */
export function startTurn(options: StartTurnOptions = {}): LoopStage {
  const scheduler = options.scheduler ?? asyncScheduler;
  const firstTrigger = options.firstTrigger;
  return loopStage((state) => {
    if (state.ended) return state;
    const { loopId, turnIndex } = state;
    const timestamp = scheduler.now();
    const triggeredBy = turnIndex > 0 ? 'continuation' : (firstTrigger ?? state.run?.firstTrigger ?? 'user');
    const out: LoopOutput[] = [{ type: 'TurnStart', loopId, turnIndex, timestamp, triggeredBy }];
    const added: AgentMessage[] = [];
    for (const m of state.pending) {
      const stored = isExtension(m) ? m : withTurnId(m, { loopId, turnIndex });
      added.push(stored);
      out.push(...announce(loopId, stored, timestamp));
    }
    const next = turnCleared(state);
    next.pending = [];
    out.push(recordInto(next, added));
    return out;
  });
}

/**
 * Closes a turn: the assistant message and the tool results enter the context, `TurnEnd` is
 * emitted, and the turn index moves on. The run ends (`ended`) when the message ended in `error`,
 * `aborted` or `guardRail`, when a stage asked to stop (`stopRequested`), or when the model call
 * failed with no message. A state with no assistant message and no failure passes through.
 *
 * Contract: per input state, TurnEnd, then the state with `messages` extended, `turnIndex` + 1 and
 * `ended` set as above; `toolResults` stay, so that the next stage can see whether the model must
 * be called again.
 *
 * ```
 * source:   --s-------|           (s: an assistant message and its tool results)
 * endTurn()
 * output:   --(es')---|           (e: TurnEnd, s': messages + message + results, turnIndex + 1)
 * ```
 *
 * @example
 * state$.pipe(loopStages(startTurn(), buildRequest(request), callModel({ provider }), runToolCalls({ tools }), endTurn()));
 */
export function endTurn(options: EndTurnOptions = {}): LoopStage {
  const scheduler = options.scheduler ?? asyncScheduler;
  const recorded = options.recorded ?? false;
  return loopStage((state) => {
    const message = state.assistant;
    if (!message) return state.failure && !state.ended ? stateWith(state, { ended: 'error' }) : state;
    const { loopId, turnIndex } = state;
    const stored = recorded ? message : withTurnId(message, { loopId, turnIndex });
    const toolResults = state.toolResults ?? [];
    const stop = message.stopReason === 'error' || message.stopReason === 'aborted' || message.stopReason === 'guardRail';
    const ended = state.ended ?? (stop || state.stopRequested !== undefined ? message.stopReason : undefined);
    const end: AgentEvent = { type: 'TurnEnd', loopId, turnIndex, message: stored, usage: message.usage, timestamp: scheduler.now(), toolResults: [...toolResults] };
    const next = recorded ? copyState(state) : recordInto(copyState(state), [stored, ...toolResults]);
    if (!recorded) next.assistant = stored;
    next.turnIndex = turnIndex + 1;
    if (ended) next.ended = ended;
    return [end, next];
  });
}
