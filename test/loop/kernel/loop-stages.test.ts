import { describe, expect, it } from 'vitest';
import { from, lastValueFrom, map, Observable, type OperatorFunction, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import {
  eventsOf, isLoopState, loopStage, loopStages, loopState, repeatTurns, stateByState, type LoopOutput, type LoopStage, type LoopState,
} from '../../../src/index.js';

/** Calls `then` 3 virtual ms after subscription (a cold marble's first value). */
function setTimeoutVirtual(cold: (marbles: string) => Observable<unknown>, then: () => void): { unsubscribe(): void } {
  return cold('---x').subscribe(() => then());
}

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

/** A stage that emits a HookError named `name`, then the state with its turn index moved by `step`. */
function marker(name: string, step = 0): LoopStage {
  return (states) =>
    new Observable<LoopOutput>((subscriber) =>
        states.subscribe({
          next: (s) => {
            subscriber.next({ type: 'HookError', loopId: s.loopId, hook: name, message: '', timestamp: 0 });
            subscriber.next({ ...s, turnIndex: s.turnIndex + step });
          },
          error: (e) => subscriber.error(e),
          complete: () => subscriber.complete(),
        }));
}

const names: OperatorFunction<LoopOutput, string> = map((o) => (isLoopState(o) ? `s${o.turnIndex}` : o.type === 'HookError' ? o.hook : o.type));

describe('loopStages', () => {
  it('hands each stage the state the one before left; events pass through in order', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const s = loopState('L');
      expectObservable(cold('-s----|', { s }).pipe(loopStages(marker('a', 1), marker('b', 10)), names)).toBe('-(abc)|', { a: 'a', b: 'b', c: 's11' });
    });
  });

  it('a stage that throws after an asynchronous one fails the chain; the stages after it do not run', () => {
    let reached = false;
    scheduler().run(({ cold, expectObservable }) => {
      const s = loopState('L');
      const later = stateByState((state, out, done) => {
        const timer = setTimeoutVirtual(cold, () => {
          out.next({ ...state, turnIndex: 1 });
          done();
        });
        return () => timer.unsubscribe();
      });
      const broken = loopStage(() => {
        throw new Error('convertToLlm bug');
      });
      const after = loopStage((state) => ((reached = true), state));
      expectObservable(cold('s', { s }).pipe(loopStages(later, broken, after))).toBe('---#', undefined, new Error('convertToLlm bug'));
    });
    expect(reached).toBe(false);
  });

  it('runs nested chains and a repetition: every stage\'s events in order, the states left out (eventsOf)', async () => {
    const turn = loopStages(marker('t', 1), loopStages(marker('u')));
    const out = await lastValueFrom(eventsOf(loopStages(marker('start'), repeatTurns(turn, { more: (s) => s.turnIndex < 2 }), marker('end')), loopState('L')).pipe(names, toArray()));
    expect(out).toEqual(['start', 't', 'u', 't', 'u', 'end']);
  });

  it('with no stage hands the state on', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const s = loopState('L');
      expectObservable(cold('-s|', { s }).pipe(loopStages())).toBe('-s|', { s });
    });
  });
});

describe('repeatTurns', () => {
  it('runs the turn again on the state it left while `more` says so', async () => {
    const out = await lastValueFrom(from([loopState('L')]).pipe(repeatTurns(marker('t', 1), { more: (s) => s.turnIndex < 3 }), names, toArray()));
    expect(out).toEqual(['t', 's1', 't', 's2', 't', 's3']);
  });

  it('by default repeats while there are pending messages or tool results, and not once the run has ended', async () => {
    const turn: LoopStage = map((s: LoopState): LoopState => ({ ...s, pending: s.pending.slice(1), turnIndex: s.turnIndex + 1 }));
    const start = loopState('L', [], [{ role: 'user', content: [], timestamp: 0 }, { role: 'user', content: [], timestamp: 0 }]);
    const out = await lastValueFrom(from([start]).pipe(repeatTurns(turn), names, toArray()));
    expect(out).toEqual(['s1', 's2']);
    const ended = await lastValueFrom(from([{ ...start, ended: 'stop' as const }]).pipe(repeatTurns(turn), names, toArray()));
    expect(ended).toEqual(['s1']);
  });

  it('keeps a flat stack over thousands of synchronous turns', async () => {
    const turns = 20_000;
    const last = await lastValueFrom(from([loopState('L')]).pipe(repeatTurns(marker('t', 1), { more: (s) => s.turnIndex < turns }), toArray()));
    expect(last.at(-1)).toMatchObject({ type: 'LoopState', turnIndex: turns });
  });
});

describe('stateByState', () => {
  /** Work that takes `ms` virtual ms per state, then leaves it with turnIndex + 1. */
  const slowly = (ms: number, scheduler: TestScheduler, torndown: number[]): LoopStage =>
    stateByState((state, out, done) => {
      const id = scheduler.schedule(() => {
        out.next({ type: 'HookError', loopId: state.loopId, hook: `h${state.turnIndex}`, message: '', timestamp: scheduler.now() });
        out.next({ ...state, turnIndex: state.turnIndex + 1 });
        done();
      }, ms);
      return () => {
        id.unsubscribe();
        torndown.push(state.turnIndex);
      };
    });

  it('handles one state at a time: a state that arrives meanwhile waits its turn; completes after the last', () => {
    const ts = scheduler();
    ts.run(({ cold, expectObservable }) => {
      const a = loopState('L');
      const b = { ...a, turnIndex: 10 };
      expectObservable(cold('ab|', { a, b }).pipe(slowly(5, ts, []), names)).toBe('-----(xy)-(zw|)', { x: 'h0', y: 's1', z: 'h10', w: 's11' });
    });
  });

  it('unsubscribing tears down the work in progress', () => {
    const ts = scheduler();
    const torndown: number[] = [];
    ts.run(({ cold, expectObservable }) => {
      expectObservable(cold('a|', { a: loopState('L') }).pipe(slowly(5, ts, torndown), names), '--!').toBe('');
    });
    expect(torndown).toEqual([0]);
  });
});
