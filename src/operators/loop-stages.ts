import { concatMap, EMPTY, expand, type Observable, of, type OperatorFunction, queueScheduler, subscribeOn } from 'rxjs';
import { isLoopState, type LoopOutput, type LoopStage, type LoopState } from './loop-state.js';

/**
 * Chains stages into one: each stage gets the state the one before it left, and the events of
 * every stage go straight through, in order. `loopStages()` with no stage hands the state on.
 *
 * ```
 * source:   --s---------|
 * loopStages(a, b)        (a emits x then s1; b emits y then s2)
 * output:   --(xys2)----|
 * ```
 *
 * @example
 * const turn = loopStages(startTurn(), mySummary(), buildRequest(request), callModel({ provider }), runToolCalls({ tools }), endTurn());
 */
export function loopStages(...stages: LoopStage[]): LoopStage {
  return (states) => stages.reduce<Observable<LoopOutput>>((out$, stage) => out$.pipe(onStates(stage)), states);
}

/** Applies a stage to the states in a stream of outputs; the events pass through untouched. */
function onStates(stage: LoopStage): OperatorFunction<LoopOutput, LoopOutput> {
  return concatMap((out) => (isLoopState(out) ? of(out).pipe(stage) : of(out)));
}

export interface RepeatTurnsOptions {
  /** Whether another turn runs after a turn that left this state (default: the run has not ended, and there are tool results to answer or pending messages). */
  more?(state: LoopState): boolean;
}

/**
 * Turn repetition: runs `turn` on each state, and again on the state each turn leaves while
 * `more` says so, with `expand`, each next turn queued on the queue scheduler, so that thousands of synchronous turns
 * run as a flat loop rather than a deepening stack. Everything every turn emits (events and the
 * state it leaves) goes out; the last state out is the final one.
 *
 * ```
 * source:   --s------------|
 * repeatTurns(turn)          (turn 1 leaves s1 with tool results, turn 2 leaves s2 with none)
 * output:   --(..s1)(..s2)-|
 * ```
 *
 * @example
 * of(loopState('loop-1', [], [userMessage('hi')])).pipe(repeatTurns(turn)).subscribe(render);
 */
export function repeatTurns(turn: LoopStage, options: RepeatTurnsOptions = {}): OperatorFunction<LoopState, LoopOutput> {
  const more = options.more ?? ((s: LoopState) => !s.ended && ((s.toolResults?.length ?? 0) > 0 || s.pending.length > 0));
  return (states) =>
    states.pipe(
      turn,
      // Each next turn is queued: inside the queue scheduler's running action it waits for the
      // current one to unwind instead of starting on top of its stack.
      expand((out) => (isLoopState(out) && more(out) ? of(out).pipe(subscribeOn(queueScheduler), turn) : EMPTY)),
      subscribeOn(queueScheduler),
    );
}
