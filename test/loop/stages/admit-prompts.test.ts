import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { admitPrompts, loopState } from '../../../src/index.js';
import { InputVerdict, type InputFilter } from '../../../src/types/hooks.js';
import { textOf, userMessage } from '../../../src/types/message.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const history = [userMessage('earlier', 0)];
const noSecrets: InputFilter = (m) => (m.role === 'user' && textOf(m).includes('password') ? InputVerdict.reject('no secrets') : InputVerdict.pass());

describe('admitPrompts', () => {
  const a = userMessage('a', 1);
  const x = userMessage('my password', 2);

  it('without prompts of its own, admits each state\'s run prompts (none for a run without)', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const one = loopState('L1', history, [], { agentId: 'A', sessionId: 'S', prompts: [a], firstTrigger: 'user' });
      const two = loopState('L2', history, [], { agentId: 'A', sessionId: 'S', prompts: [x], firstTrigger: 'user' });
      const cont = loopState('L3', history, [], { agentId: 'A', sessionId: 'S', firstTrigger: 'continuation' });
      expectObservable(cold('-o-t-c|', { o: one, t: two, c: cont }).pipe(admitPrompts())).toBe('-o-t-c|', {
        o: { ...one, pending: [a] },
        t: { ...two, pending: [x] },
        c: cont,
      });
      expectObservable(cold('-t---|', { t: two }).pipe(admitPrompts(undefined, { filters: [noSecrets] }))).toBe('-(rp)|', {
        r: { type: 'InputRejected', loopId: 'L2', reason: 'no secrets', timestamp: 1 },
        p: { ...two, ended: 'stop', rejection: 'no secrets' },
      });
    });
  });

  it('appends the prompts to pending, with no filters at once', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const s = loopState('L', history);
      expectObservable(cold('-s|', { s }).pipe(admitPrompts([a]))).toBe('-p|', { p: { ...s, pending: [a] } });
    });
  });

  it('a refused prompt refuses them all: InputRejected, and the run ends with the rejection', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const s = loopState('L', history);
      expectObservable(cold('-s---|', { s }).pipe(admitPrompts([a, x], { filters: [noSecrets] }))).toBe('-(rp)|', {
        r: { type: 'InputRejected', loopId: 'L', reason: 'no secrets', timestamp: 1 },
        p: { ...s, ended: 'stop', rejection: 'no secrets' },
      });
    });
  });
});
