import { Observable } from 'rxjs';
import type { AgentEvent } from '../../types/events.js';
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
  return directStage((state, sink) => new StageChain(stages, sink).start(state));
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
  return directStage((state, sink) => new TurnRepeat(turn, more, sink).start(state));
}

/**
 * Runs stage after stage on `sink`, each on the state the one before it left, while `nextStage`
 * names one; then `sink.done` gets the last state. A stage that settles synchronously is followed
 * by the next in a loop, not a nested call, so the stack stays flat. The run is the sink of the
 * stage it runs (one object per run of a chain, not a closure per callback: with hundreds of runs
 * interleaved, what lives across a turn's awaits is what a scavenge copies).
 */
abstract class FlatRun implements StageSink {
  readonly event: (event: AgentEvent) => void;
  readonly error: (error: unknown) => void;
  private current: LoopState | undefined;
  private teardown: (() => void) | void = undefined;
  private looping = false;
  private settledInLoop = false;
  private closed = false;

  constructor(protected readonly sink: StageSink) {
    this.event = sink.event;
    this.error = sink.error;
  }

  /** The stage to run on `current` next; none: the run is done. */
  protected abstract nextStage(current: LoopState): LoopStage | undefined;

  /** Starts on `state`; returns the teardown. */
  start(state: LoopState): () => void {
    this.current = state;
    this.advance();
    return () => {
      this.closed = true;
      if (this.teardown) this.teardown();
    };
  }

  /** A state along the way of the stage it runs is not this run's to hand on. */
  state(): void {}

  done(left: LoopState): void {
    this.current = left;
    this.advance();
  }

  private advance(): void {
    if (this.looping) {
      this.settledInLoop = true;
      return;
    }
    this.looping = true;
    try {
      while (!this.closed) {
        const current = this.current!;
        const stage = this.nextStage(current);
        if (!stage) {
          this.closed = true;
          return this.sink.done(current);
        }
        this.settledInLoop = false;
        this.teardown = runStage(stage, current, this);
        // Still running: its `done` calls advance() again.
        if (!this.settledInLoop) return;
      }
    } finally {
      this.looping = false;
    }
  }
}

/** `loopStages`' run: its stages, one after the other. */
class StageChain extends FlatRun {
  private index = 0;

  constructor(
    private readonly stages: readonly LoopStage[],
    sink: StageSink,
  ) {
    super(sink);
  }

  protected nextStage(): LoopStage | undefined {
    return this.stages[this.index++];
  }
}

/** `repeatTurns`' run: the turn, again while `more` says so (each state between turns handed on). */
class TurnRepeat extends FlatRun {
  private started = false;

  constructor(
    private readonly turn: LoopStage,
    private readonly more: (state: LoopState) => boolean,
    sink: StageSink,
  ) {
    super(sink);
  }

  protected nextStage(current: LoopState): LoopStage | undefined {
    if (this.started) {
      if (!this.more(current)) return undefined;
      this.sink.state(current);
    }
    this.started = true;
    return this.turn;
  }
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
