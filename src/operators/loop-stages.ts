import { Observable } from 'rxjs';
import type { AgentEvent } from '../types/events.js';
import { type DirectStage, directStage, type LoopStage, type LoopState, runStage, type StageSink } from './loop-state.js';

/** A stage, or nothing: `loopStages(hooks.beforeTurn && beforeTurnHook(hooks.beforeTurn), …)` leaves out what is not configured. */
export type OptionalStage = LoopStage | false | null | undefined;

const ignore = (): void => undefined;

/**
 * Chains stages into one: each stage gets the state the one before it left, and the events of
 * every stage go straight through, in order, with no operator hop per stage or per level of
 * nesting (each stage is run on the sink of the chain: see `DirectStage`). Entries that are
 * `false`, `null` or `undefined` are left out, so that a composition can say
 * `config.hooks?.beforeTurn && beforeTurnHook(…)`. `loopStages()` with no stage hands the state
 * on. Stages that complete synchronously run as a flat loop (no stack growth).
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
export function loopStages(...optional: OptionalStage[]): DirectStage {
  const stages = optional.filter((s): s is LoopStage => typeof s === 'function');
  return directStage((state, sink) => {
    let index = 0;
    return runFlat(state, sink, () => stages[index++]);
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
export function repeatTurns(turn: LoopStage, options: RepeatTurnsOptions = {}): DirectStage {
  const more = options.more ?? ((s: LoopState) => !s.ended && ((s.toolResults?.length ?? 0) > 0 || s.pending.length > 0));
  return directStage((state, sink) => {
    let started = false;
    return runFlat(state, sink, (current) => {
      if (started) {
        if (!more(current)) return undefined;
        sink.state(current);
      }
      started = true;
      return turn;
    });
  });
}

/**
 * Runs stage after stage on `sink`, each on the state the one before it left, while `nextStage`
 * names one; then `sink.done` gets the last state. A stage that settles synchronously is followed
 * by the next in a loop, not a nested call, so the stack stays flat. Returns the teardown.
 */
function runFlat(state: LoopState, sink: StageSink, nextStage: (current: LoopState) => LoopStage | undefined): () => void {
  let current = state;
  let teardown: (() => void) | void = undefined;
  let looping = false;
  let settledInLoop = false;
  let closed = false;
  const advance = (): void => {
    if (looping) {
      settledInLoop = true;
      return;
    }
    looping = true;
    try {
      while (!closed) {
        const stage = nextStage(current);
        if (!stage) {
          closed = true;
          return sink.done(current);
        }
        settledInLoop = false;
        teardown = runStage(stage, current, step);
        // Still running: its `done` calls advance() again.
        if (!settledInLoop) return;
      }
    } finally {
      looping = false;
    }
  };
  const step: StageSink = {
    event: sink.event,
    state: ignore,
    error: sink.error,
    done: (left) => {
      current = left;
      advance();
    },
  };
  advance();
  return () => {
    closed = true;
    if (teardown) teardown();
  };
}

/**
 * The events of running `stage` on `state`, as an Observable (the states it passes on are left
 * out): how a loop of stages becomes a run. Cold; unsubscribing tears the stage down.
 *
 * ```
 * eventsOf(loopStages(a, b), s)     (a emits x then s1; b emits y then s2)
 * output:   (xy|)
 * ```
 *
 * @example
 * eventsOf(repeatTurns(turn), loopState('loop-1', history, [userMessage('hi')])).subscribe(render);
 */
export function eventsOf(stage: LoopStage, state: LoopState): Observable<AgentEvent> {
  return new Observable<AgentEvent>((out) =>
    runStage(stage, state, { event: (e) => out.next(e), state: ignore, error: (e) => out.error(e), done: () => out.complete() }),
  );
}
