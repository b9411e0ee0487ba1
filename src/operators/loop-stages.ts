import { Observable, of, type OperatorFunction, type Subscription } from 'rxjs';
import { isLoopState, type LoopOutput, type LoopStage, type LoopState, type SteppedStage, stateByState, type StepOutputs } from './loop-state.js';

/** A stage, or nothing: `loopStages(hooks.beforeTurn && beforeTurnHook(hooks.beforeTurn), …)` leaves out what is not configured. */
export type OptionalStage = LoopStage | false | null | undefined;

/**
 * Chains stages into one: each stage gets the state the one before it left, and the events of
 * every stage go straight through, in order, with no operator hop per later stage. Entries that
 * are `false`, `null` or `undefined` are left out, so that a composition can say
 * `config.hooks?.beforeTurn && beforeTurnHook(…)`. `loopStages()` with no stage hands the state
 * on. Synchronous stages run as a flat loop (no stack growth, no subscription for a `loopStage`).
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
export function loopStages(...optional: OptionalStage[]): LoopStage {
  const stages = optional.filter((s): s is LoopStage => typeof s === 'function');
  return stateByState((state, out, done) => {
    let index = 0;
    let current = state;
    let inner: Subscription | undefined;
    let looping = false;
    let settledInLoop = false;
    const receive = (output: LoopOutput): void => {
      if (isLoopState(output)) current = output;
      else out.next(output);
    };
    const fail = (error: unknown): void => out.error(error);
    const advance = (): void => {
      if (looping) {
        settledInLoop = true;
        return;
      }
      looping = true;
      try {
        while (index < stages.length && !out.closed) {
          const stage = stages[index++]!;
          const step = (stage as Partial<SteppedStage>).step;
          const outputs: StepOutputs | Observable<LoopOutput> = step ? step(current) : of(current).pipe(stage);
          if (!(outputs instanceof Observable)) {
            if (isLoopState(outputs as LoopOutput)) current = outputs as LoopState;
            else for (const o of outputs as readonly LoopOutput[]) receive(o);
            continue;
          }
          settledInLoop = false;
          inner = outputs.subscribe({ next: receive, error: fail, complete: advance });
          // Still running: its completion calls advance() again.
          if (!settledInLoop) return;
        }
        out.next(current);
        done();
      } finally {
        looping = false;
      }
    };
    advance();
    return () => inner?.unsubscribe();
  });
}

export interface RepeatTurnsOptions {
  /** Whether another turn runs after a turn that left this state (default: the run has not ended, and there are tool results to answer or pending messages). */
  more?(state: LoopState): boolean;
}

/**
 * Turn repetition: runs `turn` on each state, and again on the state each turn leaves while
 * `more` says so. A turn that completes synchronously is followed by the next one in a loop, not
 * a nested call, so that thousands of synchronous turns keep a flat stack. Everything every turn
 * emits (events and the state it leaves) goes out; the last state out is the final one (inside
 * `loopStages`, the state the next stage gets).
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
  return stateByState((state, out, done) => {
    let current = state;
    let inner: Subscription | undefined;
    let looping = false;
    let settledInLoop = false;
    let started = false;
    const receive = (output: LoopOutput): void => {
      if (isLoopState(output)) current = output;
      out.next(output);
    };
    const fail = (error: unknown): void => out.error(error);
    const next = (): void => {
      if (looping) {
        settledInLoop = true;
        return;
      }
      looping = true;
      try {
        while (!out.closed && (!started || more(current))) {
          started = true;
          settledInLoop = false;
          inner = of(current).pipe(turn).subscribe({ next: receive, error: fail, complete: next });
          // Still running: its completion calls next() again, which decides on another turn.
          if (!settledInLoop) return;
        }
        done();
      } finally {
        looping = false;
      }
    };
    next();
    return () => inner?.unsubscribe();
  });
}
