import { type LoopStage, loopStage, recordInto, signalOf } from '../kernel/loop-state.js';
import { copyState } from '../kernel/state-with.js';

export interface RecordToolResultsOptions {
  /** The caller's abort signal: results recorded after it was aborted end the run as `aborted` (default: the state's `run.signal`). */
  signal?: AbortSignal;
}

/**
 * The turn's tool results enter the context, in the order of the calls (put it after
 * `runToolCalls`); `toolResults` stays set, so that later stages see that the model must answer
 * them. When the caller's signal is aborted, the run ends (`aborted`). A state with no tool
 * results passes through.
 *
 * Contract: per input state, no events, and the state with the results appended to `messages`.
 *
 * ```
 * source:   --s--|              (s: toolResults r1, r2)
 * recordToolResults()
 * output:   --s'-|              (s': messages + r1 + r2)
 * ```
 *
 * @example
 * const turn = loopStages(startTurn(), buildRequest(request), callModel({ provider }), recordAssistant(), runToolCalls({ tools }), recordToolResults(), endTurn({ recorded: true }));
 */
export function recordToolResults(options: RecordToolResultsOptions = {}): LoopStage {
  return loopStage((state) => {
    const results = state.toolResults;
    if (!results || results.length === 0) return state;
    const next = recordInto(copyState(state), results);
    if (signalOf(options, state)?.aborted && !next.ended) next.ended = 'aborted';
    return next;
  });
}
