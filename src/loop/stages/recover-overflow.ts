import { of } from 'rxjs';
import { isProviderError } from '../../types/errors.js';
import { type LoopStage, loopStage } from '../kernel/loop-state.js';
import { stateWith } from '../kernel/state-with.js';

/**
 * One recovery from a context overflow (put it after `callModel`): when the call failed with a
 * provider `contextOverflow` before any of its message was shown, and the run has not recovered
 * once already, `retry` runs on the state (the failure cleared, `overflowRecovered` set); give it
 * the compaction for an overflow, the request and the call again. Any other state passes through,
 * and a retry that fails as well leaves its failure for `settleCall`.
 *
 * Contract: per input state, what `retry` emits for it; or the state.
 *
 * ```
 * source:   --f----------|        (f: the call failed with contextOverflow)
 * recoverOverflow(loopStages(compactContext(config, { reason: 'overflow' }), buildRequest(request), callModel({ provider })))
 * output:   --(abm..f')--|        (a/b: CompactionStart/End, m..: the retried call's events, f': the state it left)
 * ```
 *
 * @example
 * const call = callModel({ provider });
 * const turn = loopStages(startTurn(), buildRequest(request), call, recoverOverflow(loopStages(compactContext(config, { reason: 'overflow' }), buildRequest(request), call)), settleCall({ model }), endTurn());
 */
export function recoverOverflow(retry: LoopStage): LoopStage {
  return loopStage((state) => {
    const failure = state.failure;
    const overflow = failure !== undefined && isProviderError(failure.error) && failure.error.kind === 'contextOverflow';
    if (!overflow || state.overflowRecovered || state.partial || state.ended) return state;
    return of(stateWith(state, { failure: undefined, overflowRecovered: true })).pipe(retry);
  });
}
