import { type LlmMessage, withTurnId } from '../../types/message.js';
import { Usage } from '../../types/usage.js';
import { type LoopStage, loopStage, recordInto } from '../kernel/loop-state.js';
import { copyState } from '../kernel/state-with.js';

/**
 * The turn's assistant message enters the context (put it after `settleCall`, before the tools):
 * tagged with the turn (`turnId`: a copy, unless `callModel` / `settleCall` tagged it with `tagTurn`), its usage added to the run's `usage`, its stop reason
 * kept as `lastStopReason`; a message that ended in `error` or `aborted` ends the run. A state with
 * no assistant message, or whose run has ended, passes through.
 *
 * Contract: per input state, no events, and the state with `assistant` tagged and recorded.
 *
 * ```
 * source:   --s--|              (s: an assistant message m)
 * recordAssistant()
 * output:   --s'-|              (s': messages + m', usage + m.usage, lastStopReason)
 * ```
 *
 * @example
 * const turn = loopStages(startTurn(), buildRequest(request), callModel({ provider }), settleCall({ model }), recordAssistant(), runToolCalls({ tools }), recordToolResults(), endTurn({ recorded: true }));
 */
export function recordAssistant(): LoopStage {
  return loopStage((state) => {
    const message = state.assistant;
    if (!message || state.ended) return state;
    const tagged = (message as LlmMessage).turnId;
    const stored = tagged?.loopId === state.loopId && tagged.turnIndex === state.turnIndex ? message : withTurnId(message, { loopId: state.loopId, turnIndex: state.turnIndex });
    const next = recordInto(copyState(state), [stored]);
    next.assistant = stored;
    next.usage = Usage.combine(state.usage ?? Usage.empty(), message.usage);
    next.lastStopReason = message.stopReason;
    if (message.stopReason === 'error' || message.stopReason === 'aborted') next.ended = message.stopReason;
    return next;
  });
}
