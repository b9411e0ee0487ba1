import { isExtension } from '../../types/message.js';
import { type DirectStage, directStage, type LoopStage, type LoopState, runStage, turnCleared } from './loop-state.js';

/**
 * The boundary of a turn: last turn's fields (`request`, `partial`, `assistant`, `failure`,
 * `toolResults`, `stopRequested`) are cleared, and `turn` runs only when a model call is due:
 * messages wait in `pending`, or the context does not end with the model's answer (extension
 * messages aside). Otherwise (everything that asked for the turn was refused by the input filters)
 * no turn starts: the state passes on for the stages after it to decide how the run goes on.
 *
 * Contract: per input state, what `turn` emits for the cleared state; or, with no turn due (or
 * the run ended), the cleared state.
 *
 * ```
 * source:   --s----a--|          (s: a pending prompt, a: the context ends with an answer)
 * whenTurnDue(turn)
 * output:   --(..s')a'|          (s': what turn left; a': a with last turn's fields cleared)
 * ```
 *
 * @example
 * const loopTurn = loopStages(takeSteering(take), whenTurnDue(loopStages(startTurn(), buildRequest(request), callModel({ provider }), endTurn())), decideNext());
 */
export function whenTurnDue(turn: LoopStage): DirectStage {
  return directStage((state, sink) => {
    const next = lastTurnCleared(state);
    return !state.ended && turnDue(state) ? runStage(turn, next, sink) : sink.done(next);
  });
}

/** The state without last turn's request, messages, results and stop request. */
function lastTurnCleared(state: LoopState): LoopState {
  if (!state.request && !state.partial && !state.assistant && !state.failure && !state.toolResults && state.stopRequested === undefined) return state;
  return turnCleared(state);
}

/** Whether a model call is due: messages wait to be sent, or the context does not end with the model's answer. */
export function turnDue(state: LoopState): boolean {
  if (state.pending.length > 0) return true;
  const messages = state.messages;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (!isExtension(m)) return m.role !== 'assistant';
  }
  return false;
}
