import { directStage, type LoopStage } from '../kernel/loop-state.js';
import { loopStages } from '../kernel/loop-stages.js';
import { openToolCalls } from '../../types/open-tool-calls.js';
import { stateWith } from '../kernel/state-with.js';

/**
 * A run on the context of a run that stopped mid-dispatch (a call waiting for approval when the
 * process went away) first answers the calls it left open, before any new prompt: the tool stage (`runToolCalls`, with
 * approval) runs on the last assistant message narrowed to the calls without results, and the
 * record stage (`recordToolResults`) adds their results; then the turns go on as usual, the model
 * seeing every result. A state with no open calls, or one that has ended, passes through.
 *
 * Contract: per input state, the tools' events, then the state with the results in `messages`
 * (and no `assistant` / `toolResults` left over).
 *
 * ```
 * source:   s|            (s.messages end with an assistant message calling a and b, b answered)
 * answerOpenCalls(runToolCalls({ tools }), recordToolResults())
 * output:   (SEMm s')|    (a runs: S / E its start and end, Mm its result message; s': messages + a's result)
 * ```
 *
 * @example
 * loopStages(startRun(ids), answerOpenCalls(tools, recordToolResults()), repeatTurns(turn, { more }), endRun())
 */
export function answerOpenCalls(tools: LoopStage, record: LoopStage): LoopStage {
  const answer = loopStages(tools, record);
  return directStage((state, sink) => {
    const open = state.ended ? undefined : openToolCalls(state.messages);
    if (!open) return sink.done(state);
    return answer.run(stateWith(state, { assistant: open }), {
      ...sink,
      done: (answered) => {
        const { assistant: _a, toolResults: _r, ...rest } = answered;
        sink.done(rest);
      },
    });
  });
}
