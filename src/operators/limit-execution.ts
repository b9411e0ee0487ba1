import { asyncScheduler, defer, type MonoTypeOperatorFunction, Observable, type SchedulerLike } from 'rxjs';
import type { ExecutionLimits } from '../types/config.js';
import type { AgentEvent } from '../types/events.js';
import type { CostConfig } from '../types/usage.js';
import { ExecutionTracker } from '../context/execution.js';

export interface LimitExecutionOptions {
  scheduler?: SchedulerLike;
  pricing?: CostConfig;
  /**
   * Called instead of subscribing when a limit is reached, with the reason ("Max turns reached
   * (50/50)"); returns the events that end the run (the loop emits its "[Agent stopped: …]" message).
   */
  onLimit(reason: string): Observable<AgentEvent>;
}

/**
 * Guards each turn against the run's execution limits. Apply it to a per-turn source that is
 * re-subscribed once per turn (with `repeat`): every subscription first checks turns, tokens,
 * cost and elapsed scheduler time recorded so far; over a limit it emits `onLimit`'s events
 * instead of running the turn. It counts a turn, and its usage, on each `TurnEnd` that passes.
 *
 * ```
 * turn$:       -s-E|            (s: TurnStart, E: TurnEnd)
 * turn$.pipe(limitExecution({ maxTurns: 2 }, { onLimit }), repeat(3))
 * output:      -s-E-s-E(L|)     (L: the events of onLimit('Max turns reached (2/2)'))
 * ```
 *
 * @example
 * defer(() => runTurn()).pipe(
 *   limitExecution({ maxTurns: 10 }, { onLimit: (reason) => of(stopEvent(reason)) }),
 *   repeat({ delay: () => (moreWork() ? of(0) : EMPTY) }),
 * );
 */
export function limitExecution(limits: ExecutionLimits, options: LimitExecutionOptions): MonoTypeOperatorFunction<AgentEvent> {
  const scheduler = options.scheduler ?? asyncScheduler;
  let tracker: ExecutionTracker | undefined;
  return (turn$) =>
    defer(() => {
      tracker ??= new ExecutionTracker(limits, scheduler.now(), options.pricing);
      const active = tracker;
      const reason = active.exceeded(scheduler.now());
      if (reason !== undefined) return options.onLimit(reason);
      return new Observable<AgentEvent>((subscriber) =>
        turn$.subscribe({
          next(event) {
            if (event.type === 'TurnEnd') active.recordTurn(event.usage);
            subscriber.next(event);
          },
          error: (e: unknown) => subscriber.error(e),
          complete: () => subscriber.complete(),
        }),
      );
    });
}
