import { asyncScheduler } from 'rxjs';
import type { AgentEvent } from '../../types/events.js';
import { withTurnId } from '../../types/message.js';
import { type LoopStage, loopStage, recordInto } from '../kernel/loop-state.js';
import { copyState, stateWith } from '../kernel/state-with.js';
import type { TurnBoundsOptions } from './start-turn.js';

export interface EndTurnOptions extends TurnBoundsOptions {
  /** The message and the results are already in `messages` (`recordAssistant`, `recordToolResults` ran): only TurnEnd and the turn index. */
  recorded?: boolean;
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
