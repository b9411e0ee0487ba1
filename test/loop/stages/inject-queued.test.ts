import { describe, expect, it } from 'vitest';
import { tap } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { injectQueued, loopState, type LoopState } from '../../../src/index.js';
import { type InputFilter, InputVerdict } from '../../../src/types/hooks.js';
import { textOf, userMessage, type AgentMessage } from '../../../src/types/message.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

const a = userMessage('a', 1);
const b = userMessage('b', 2);
const x = userMessage('my password', 3);
const noSecrets: InputFilter = (m) => (m.role === 'user' && textOf(m).includes('password') ? InputVerdict.reject('no secrets') : InputVerdict.pass());

/** A queue that hands over the next batch each time it is taken from. */
function batches(...list: AgentMessage[][]): () => AgentMessage[] {
  let i = 0;
  return () => list[i++] ?? [];
}

const s: LoopState = loopState('L1', [userMessage('history', 0)]);
const t: LoopState = { ...s, turnIndex: 1 };

describe('injectQueued', () => {
  it('takes what is queued when each state arrives, rejects through the filters, appends the rest to pending', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const out$ = cold('--s-----t-----|', { s, t }).pipe(injectQueued(batches([a], [b, x]), { filters: [noSecrets] }));
      expectObservable(out$).toBe('--p-----(rq)--|', {
        p: { ...s, pending: [a] },
        r: { type: 'InputRejected', loopId: 'L1', reason: 'no secrets', timestamp: 8 },
        q: { ...t, pending: [b] },
      });
    });
  });

  it('without filters appends everything; with nothing queued hands on the very same state', () => {
    const outputs: unknown[] = [];
    scheduler().run(({ cold, expectObservable }) => {
      const out$ = cold('-s-t|', { s, t }).pipe(injectQueued(batches([a, x])));
      expectObservable(out$.pipe(tap((o) => outputs.push(o)))).toBe('-p-t|', { p: { ...s, pending: [a, x] }, t });
    });
    expect(outputs[1]).toBe(t);
    expect(s.pending).toEqual([]); // the input state is not changed
  });

  it('takes nothing for a run that has ended', () => {
    let taken = 0;
    const ended: LoopState = { ...s, ended: 'stop' };
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-e|', { e: ended }).pipe(injectQueued(() => (taken++, [a]), { filters: [noSecrets] }))).toBe('-e|', { e: ended });
    });
    expect(taken).toBe(0);
  });
});
