import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import {
  askHook, decideNext, limitTurns, loopStage, loopStages, loopState, takeSteering, whenTurnDue, type LoopState,
} from '../../../src/index.js';
import { InputVerdict, type InputFilter, type PostLoopPolicy } from '../../../src/types/hooks.js';
import { emptyAssistant, textOf, userMessage, type AgentMessage, type ToolResultMessage } from '../../../src/types/message.js';
import { Usage } from '../../../src/types/usage.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const history = [userMessage('hi', 0)];
const answered = [...history, { ...emptyAssistant('m', 'p', 1), content: [{ type: 'text' as const, text: 'hello' }] }];
const result: ToolResultMessage = { role: 'toolResult', toolCallId: 'c', toolName: 't', content: [{ type: 'text', text: 'ok' }], isError: false, timestamp: 2 };
const noSecrets: InputFilter = (m) => (m.role === 'user' && textOf(m).includes('password') ? InputVerdict.reject('no secrets') : InputVerdict.pass());

/** A queue that hands over the next batch each time it is taken from. */
function batches(...list: AgentMessage[][]): () => AgentMessage[] {
  let i = 0;
  return () => list[i++] ?? [];
}

describe('decideNext', () => {
  it('goes on for tool results, pending messages or waiting steering; else takes follow-ups; with none, ends on the last stop reason', () => {
    const a = userMessage('a', 3);
    scheduler().run(({ cold, expectObservable }) => {
      const t: LoopState = { ...loopState('L', answered), toolResults: [result], lastStopReason: 'toolUse' };
      const d: LoopState = { ...loopState('L', answered), lastStopReason: 'length' };
      const steeringWaits = [true, false, false];
      const stage = decideNext({ followUp: batches([a], []), steeringPending: () => steeringWaits.shift() ?? false });
      expectObservable(cold('t-d-d-d|', { t, d }).pipe(stage)).toBe('t-d-f-e|', {
        t,
        d,
        f: { ...d, pending: [a] },
        e: { ...d, ended: 'length' },
      });
    });
  });

  it('asks the post-loop policies when nothing is queued: inject queues messages for another turn, stop ends, a failure is a HookError', () => {
    const more = userMessage('one more thing', 4);
    const policies: PostLoopPolicy[] = [() => { throw new Error('policy bug'); }, ({ newMessages }) => (newMessages.length === 0 ? { action: 'inject', messages: [more] } : { action: 'stop', reason: 'done' })];
    scheduler().run(({ cold, expectObservable }) => {
      const d: LoopState = { ...loopState('L', answered), newMessages: [], lastStopReason: 'stop' };
      const n: LoopState = { ...d, newMessages: answered };
      expectObservable(cold('-d---n---|', { d, n }).pipe(decideNext({ postLoop: policies }))).toBe('-(hp)(he)|', {
        h: expect.objectContaining({ type: 'HookError', hook: 'postLoop', message: 'policy bug' }),
        p: { ...d, pending: [more] },
        e: { ...n, ended: 'stop' },
      });
    });
  });

  it('ends at once on an aborted signal or a requested stop; refused follow-ups are announced and dropped', () => {
    const aborted = new AbortController();
    aborted.abort();
    scheduler().run(({ cold, expectObservable }) => {
      const t: LoopState = { ...loopState('L', answered), toolResults: [result], lastStopReason: 'toolUse' };
      const r: LoopState = { ...t, stopRequested: 'enough' };
      const d: LoopState = { ...loopState('L', answered), lastStopReason: 'stop' };
      expectObservable(cold('t|', { t }).pipe(decideNext({ signal: aborted.signal }))).toBe('a|', { a: { ...t, ended: 'aborted' } });
      expectObservable(cold('r|', { r }).pipe(decideNext())).toBe('s|', { s: { ...r, ended: 'toolUse' } });
      expectObservable(cold('d---|', { d }).pipe(decideNext({ followUp: () => [userMessage('my password', 5)], filters: [noSecrets] }))).toBe('(xe)|', {
        x: { type: 'InputRejected', loopId: 'L', reason: 'no secrets', timestamp: 0 },
        e: { ...d, ended: 'stop' },
      });
    });
  });
});

describe('limitTurns', () => {
  it('starts the clock on the first state; over a limit, ends the run with an [Agent stopped: …] message', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const s = loopState('L', history);
      const t: LoopState = { ...s, turnIndex: 2, startedAt: 0 };
      const u: LoopState = { ...s, turnIndex: 1, startedAt: 0, usage: { ...Usage.empty(), totalTokens: 900, input: 600, output: 300 } };
      const stop = (text: string, at: number): AgentMessage => ({ role: 'user', content: [{ type: 'text', text }], timestamp: at });
      const turns = stop('[Agent stopped: Max turns reached (2/2)]', 5);
      const tokens = stop('[Agent stopped: Max tokens reached (900/500)]', 10);
      expectObservable(cold('-s---t----u----|', { s, t, u }).pipe(limitTurns({ maxTurns: 2, maxTotalTokens: 500 }))).toBe('-a---(bcd)(efg)|', {
        a: { ...s, startedAt: 1 },
        b: { type: 'MessageStart', loopId: 'L', message: turns, timestamp: 5 },
        c: { type: 'MessageEnd', loopId: 'L', message: turns, timestamp: 5 },
        d: { ...t, messages: [...history, turns], newMessages: [turns], sinceRequest: [turns], ended: 'maxTurns' },
        e: { type: 'MessageStart', loopId: 'L', message: tokens, timestamp: 10 },
        f: { type: 'MessageEnd', loopId: 'L', message: tokens, timestamp: 10 },
        g: { ...u, messages: [...history, tokens], newMessages: [tokens], sinceRequest: [tokens], ended: 'guardRail' },
      });
    });
  });
});
