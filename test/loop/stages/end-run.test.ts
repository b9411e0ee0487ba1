import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { endRun, loopState, type LoopState } from '../../../src/index.js';
import { InputVerdict, type InputFilter } from '../../../src/types/hooks.js';
import { emptyAssistant, textOf, userMessage, type AgentMessage } from '../../../src/types/message.js';
import { Usage } from '../../../src/types/usage.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const history = [userMessage('earlier', 0)];
const noSecrets: InputFilter = (m) => (m.role === 'user' && textOf(m).includes('password') ? InputVerdict.reject('no secrets') : InputVerdict.pass());

describe('endRun', () => {
  const answer = { ...emptyAssistant('m', 'p', 2), stopReason: 'length' as const };
  const usage = { ...Usage.empty(), input: 10, output: 5, totalTokens: 15 };

  it('emits AgentEnd with the new messages, the usage and the way the run ended, then calls afterLoop', () => {
    const seen: Array<[readonly AgentMessage[], Usage]> = [];
    scheduler().run(({ cold, expectObservable }) => {
      const s: LoopState = { ...loopState('L', history), newMessages: [answer], usage, lastStopReason: 'length' };
      const t: LoopState = { ...s, ended: 'maxTurns', rejection: 'why' };
      const after = (messages: readonly AgentMessage[], u: Usage): void => void seen.push([messages, u]);
      expectObservable(cold('-s-----t-----|', { s, t }).pipe(endRun({ afterLoop: after }))).toBe('-(es)--(fu)--|', {
        e: { type: 'AgentEnd', loopId: 'L', messages: [answer], usage, timestamp: 1, stopReason: 'length' },
        s,
        f: { type: 'AgentEnd', loopId: 'L', messages: [answer], usage, timestamp: 7, stopReason: 'maxTurns', rejection: 'why' },
        u: t,
      });
    });
    expect(seen).toEqual([[[answer], usage], [[answer], usage]]);
  });

  it('an aborted signal makes it aborted; a failing afterLoop is a HookError after AgentEnd', () => {
    const controller = new AbortController();
    controller.abort();
    scheduler().run(({ cold, expectObservable }) => {
      const s: LoopState = loopState('L', history);
      expectObservable(cold('-s----|', { s }).pipe(endRun({ signal: controller.signal, afterLoop: () => { throw new Error('store down'); } }))).toBe('-(ehs)|', {
        e: { type: 'AgentEnd', loopId: 'L', messages: [], usage: Usage.empty(), timestamp: 1, stopReason: 'aborted' },
        h: { type: 'HookError', loopId: 'L', hook: 'afterLoop', message: 'store down', timestamp: 1 },
        s,
      });
    });
  });
});
