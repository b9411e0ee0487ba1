import { EMPTY, from, Observable, type Subscription } from 'rxjs';
import type { AgentEvent } from '../types/events.js';
import { isLoopState, type LoopOutput, type LoopState } from '../operators/loop-state.js';

/**
 * What a stage of the run is, when it is reached: the events it has at once, an Observable for
 * work that takes time, or nothing (`undefined`).
 */
export type Stage = EventStage | Observable<LoopOutput>;

/** A stage with events only (no loop state). */
export type EventStage = readonly AgentEvent[] | Observable<AgentEvent> | undefined;

export const NO_EVENTS: AgentEvent[] = [];

/**
 * Plays the stages a generator yields, one after the other, as one Observable: `concat` of
 * `defer`s, with the generator's own code deciding what comes next. A stage is computed when the
 * one before it has completed (the spec's checkpoints read the run's state at that moment);
 * events a stage already has are emitted with no Observable made for them. A stage Observable
 * that fails is thrown into the generator at its `yield`, so `try { yield call$ } catch` is
 * `catchError`; uncaught, the error fails the run. A stage that completes synchronously
 * continues this loop instead of recursing, so a long synchronous run (scripted provider,
 * synchronous tools) does not grow the stack. Unsubscribing tears the current stage down and
 * closes the generator.
 */
export function playStages(stages: () => Generator<Stage, void, undefined>, onState: (state: LoopState) => void = noState): Observable<AgentEvent> {
  return new Observable<AgentEvent>((subscriber) => {
    const generator = stages();
    let inner: Subscription | undefined;
    let looping = false;
    let settledInLoop = false;
    let failure: { error: unknown } | undefined; // how the last stage ended, when it failed
    let computing = false; // the generator's own code is running (it cannot be closed then)
    const nextStage = (): IteratorResult<Stage, void> => {
      computing = true;
      try {
        if (!failure) return generator.next();
        const { error } = failure;
        failure = undefined;
        return generator.throw(error);
      } finally {
        computing = false;
      }
    };
    const fail = (error: unknown): void => {
      failure = { error };
      advance();
    };
    const advance = (): void => {
      if (looping) {
        settledInLoop = true;
        return;
      }
      looping = true;
      try {
        while (!subscriber.closed) {
          const next = nextStage();
          if (next.done) return subscriber.complete();
          const stage = next.value;
          if (stage === undefined) continue;
          if (isEvents(stage)) {
            for (let i = 0; i < stage.length && !subscriber.closed; i++) subscriber.next(stage[i]!);
            continue;
          }
          settledInLoop = false;
          // A loop stage's outputs: events go out, the state it leaves goes to `onState`.
          inner = (stage as Observable<LoopOutput>).subscribe({ next: (e) => (isLoopState(e) ? onState(e) : subscriber.next(e)), complete: advance, error: fail });
          // Still running: its completion (or failure) calls advance() again.
          if (!settledInLoop) return;
        }
      } catch (e) {
        // A stage that throws, or a failure the generator did not catch, fails the run.
        subscriber.error(e);
      } finally {
        looping = false;
      }
    };
    advance();
    return () => {
      inner?.unsubscribe();
      if (!computing) generator.return();
    };
  });
}

export function isEvents(stage: Exclude<Stage, undefined>): stage is readonly AgentEvent[] {
  return Array.isArray(stage);
}

export function toObservable(stage: EventStage): Observable<AgentEvent> {
  if (stage === undefined) return EMPTY;
  return isEvents(stage) ? from(stage) : stage;
}

function noState(state: LoopState): void {
  throw new Error(`playStages: a stage left a state (loop ${state.loopId}) but the run takes none`);
}
