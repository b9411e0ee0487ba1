import { describe, expect, it } from 'vitest';
import { defer, EMPTY, type Observable, of, repeat } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { limitExecution, type LimitExecutionOptions } from '../../src/operators/limit-execution.js';
import type { ExecutionLimits } from '../../src/types/config.js';
import type { AgentEvent } from '../../src/types/events.js';
import { userMessage } from '../../src/types/message.js';
import { Usage } from '../../src/types/usage.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

const loopId = 's.c.1';
const turnStart: AgentEvent = { type: 'TurnStart', loopId, turnIndex: 0, timestamp: 0, triggeredBy: 'user' };
const turnEnd = (usage: Partial<Usage> = {}): AgentEvent => ({
  type: 'TurnEnd', loopId, turnIndex: 0, message: userMessage('x', 0), usage: { ...Usage.empty(), ...usage }, timestamp: 0, toolResults: [],
});
/** What the loop would emit for a limit: one event carrying the reason, so the diagram can show it. */
const stopped = (reason: string): AgentEvent => ({ type: 'InputRejected', loopId, reason, timestamp: 0 });

/** Turn after turn until a limit ends the run, as the agent loop drives it. */
function runUntilLimit(turn$: Observable<AgentEvent>, limits: ExecutionLimits, options: Omit<LimitExecutionOptions, 'onLimit'> = {}): Observable<AgentEvent> {
  let ended = false;
  return turn$.pipe(
    limitExecution(limits, { ...options, onLimit: (reason) => ((ended = true), of(stopped(reason))) }),
    repeat({ delay: () => (ended ? EMPTY : of(0)) }),
  );
}

describe('limitExecution', () => {
  it('runs turns until maxTurns, then emits onLimit’s events instead of the next turn', () => {
    const reasons: string[] = [];
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const turn$ = cold('-s-E|', { s: turnStart, E: turnEnd() });
      const run$ = turn$.pipe(
        limitExecution({ maxTurns: 2 }, { onLimit: (reason) => (reasons.push(reason), of(stopped(reason))) }),
        repeat(3),
      );
      expectObservable(run$).toBe('-s-E-s-E(L|)', { s: turnStart, E: turnEnd(), L: stopped('Max turns reached (2/2)') });
      // The third turn is never subscribed: the limit replaces it.
      expectSubscriptions(turn$.subscriptions).toBe(['^---!', '----^---!']);
    });
    expect(reasons).toEqual(['Max turns reached (2/2)']);
  });

  it('stops on total tokens, counted from each TurnEnd’s usage', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const run$ = runUntilLimit(cold('-E|', { E: turnEnd({ totalTokens: 600 }) }), { maxTotalTokens: 1_000 });
      expectObservable(run$).toBe('-E-E(L|)', { E: turnEnd({ totalTokens: 600 }), L: stopped('Max tokens reached (1200/1000)') });
    });
  });

  it('stops on cost, priced with the given rates', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const E = turnEnd({ input: 100_000, output: 10_000 }); // $0.45 at $3 / $15 per million
      const run$ = runUntilLimit(cold('-E|', { E }), { maxCost: 0.5 }, { pricing: { input: 3, output: 15 } });
      expectObservable(run$).toBe('-E-E(L|)', { E, L: stopped('Max cost reached ($0.9000/$0.5000)') });
    });
  });

  it('stops on duration measured in (virtual) scheduler time from the first turn', () => {
    scheduler().run(({ cold, expectObservable }) => {
      // Each turn takes one virtual second; the fourth would start at 3 s, when 3 s are used up.
      const E = turnEnd();
      const run$ = runUntilLimit(cold('999ms E|', { E }), { maxDurationMs: 3_000 });
      expectObservable(run$).toBe('999ms E 999ms E 999ms E (L|)', { E, L: stopped('Max duration reached (3s/3s)') });
    });
  });

  it('starts the clock at the first subscription, not when the operator is created', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const E = turnEnd();
      const run$ = runUntilLimit(cold('500ms E|', { E }), { maxDurationMs: 1_000 });
      // Subscribed at 500 ms: turns start at 500 and 1001; at 1502 one second has passed. Had the clock
      // started at 0, the second turn would already have been refused.
      expectObservable(run$, '500ms ^').toBe('1000ms E 500ms E (L|)', { E, L: stopped('Max duration reached (1s/1s)') });
    });
  });

  it('counts only turns that ended: a turn that errors is not counted and the error passes through', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const boom = new Error('provider down');
      let attempt = 0;
      const turn$: Observable<AgentEvent> = defer(() => (attempt++ === 0 ? cold<AgentEvent>('-#', undefined, boom) : cold('-E|', { E: turnEnd() })));
      expectObservable(turn$.pipe(limitExecution({ maxTurns: 1 }, { onLimit: (r) => of(stopped(r)) }))).toBe('-#', undefined, boom);
    });
  });

  it('keeps counting across re-subscriptions of the same operator instance (that is how `repeat` drives it)', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const E = turnEnd();
      const guarded = cold('-E|', { E }).pipe(limitExecution({ maxTurns: 1 }, { onLimit: (r) => of(stopped(r)) }));
      expectObservable(guarded).toBe('-E|', { E });
      expectObservable(guarded, '---^').toBe('---(L|)', { L: stopped('Max turns reached (1/1)') });
    });
  });

  it('passes every event of a turn through untouched', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const E = turnEnd({ totalTokens: 5 });
      const run$ = cold('-s-E|', { s: turnStart, E }).pipe(limitExecution({}, { onLimit: (r) => of(stopped(r)) }), repeat(3));
      expectObservable(run$).toBe('-s-E-s-E-s-E|', { s: turnStart, E });
    });
  });
});
