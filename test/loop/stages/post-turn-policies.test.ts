import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { Observable } from 'rxjs';
import { loopState, postTurnPolicies, type LoopState } from '../../../src/index.js';
import { emptyAssistant, userMessage, type AssistantMessage, type ToolResultMessage } from '../../../src/types/message.js';
import type { PostTurnContext, PostTurnPolicy } from '../../../src/types/hooks.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

const call = { type: 'toolCall' as const, id: 'c1', name: 'search', arguments: {} };
const answer: AssistantMessage = { ...emptyAssistant('m', 'p', 1), content: [{ type: 'text', text: 'raw' }, call], stopReason: 'toolUse' };
const stored = { ...answer, turnId: { loopId: 'L', turnIndex: 0 } };
const result: ToolResultMessage = { role: 'toolResult', toolCallId: 'c1', toolName: 'search', content: [{ type: 'text', text: 'ok' }], isError: false, timestamp: 2 };
const prompt = userMessage('hi', 0);
const turn = (): LoopState => ({ ...loopState('L', [prompt, stored, result]), assistant: stored, toolResults: [result] });

describe('postTurnPolicies', () => {
  it('asks each policy about the message and results; a thrown one is a HookError and counts as continue; stop ends the asking', () => {
    const asked: PostTurnContext[] = [];
    scheduler().run(({ cold, expectObservable }) => {
      const boom: PostTurnPolicy = () => {
        throw new Error('policy broke');
      };
      const stop: PostTurnPolicy = (ctx) => {
        asked.push(ctx);
        return { action: 'stop', reason: 'enough' };
      };
      const never: PostTurnPolicy = () => {
        throw new Error('asked after a stop');
      };
      const s = turn();
      expectObservable(cold('-s----|', { s }).pipe(postTurnPolicies([boom, stop, never]))).toBe('-(hn)-|', {
        h: { type: 'HookError', loopId: 'L', hook: 'postTurn', message: 'policy broke', timestamp: 1 },
        n: { ...s, stopRequested: 'enough' },
      });
    });
    expect(asked).toEqual([{ message: stored, toolResults: [result], messages: [prompt, stored, result], turnIndex: 0 }]);
  });

  it('does not change the state it was given', () => {
    const s = turn();
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('s|', { s }).pipe(postTurnPolicies([() => ({ action: 'stop', reason: 'x' })]))).toBe('n|', { n: { ...s, stopRequested: 'x' } });
    });
    expect(s.stopRequested).toBeUndefined();
    expect(s.messages).toEqual([prompt, stored, result]);
  });

  it('replaces the message (keeping its turn id) in assistant and messages when an inject keeps the tool calls', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const edited: AssistantMessage = { ...answer, content: [{ type: 'text', text: 'edited' }, call] };
      const s = turn();
      const replacement = { ...edited, turnId: stored.turnId };
      // An asynchronous answer (an Observable emitting later) is waited for.
      const inject: PostTurnPolicy = () => cold('--v|', { v: { action: 'inject' as const, message: edited } });
      expectObservable(cold('s---|', { s }).pipe(postTurnPolicies([inject]))).toBe('--n-|', {
        n: { ...s, assistant: replacement, messages: [prompt, replacement, result] },
      });
      expect(s.messages[1]).toBe(stored);
    });
  });

  it('refuses an inject that changes the tool calls, with a HookError, and keeps the original', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const s = turn();
      const inject: PostTurnPolicy = () => ({ action: 'inject', message: { ...answer, content: [{ type: 'text', text: 'no calls' }] } });
      expectObservable(cold('s---|', { s }).pipe(postTurnPolicies([inject]))).toBe('(hs)|', {
        h: expect.objectContaining({ type: 'HookError', hook: 'postTurn', message: expect.stringContaining('not add or drop tool calls') }),
        s,
      });
    });
  });

  it('passes through a state with no message, and one with a stop already requested, without asking', () => {
    let asked = 0;
    scheduler().run(({ cold, expectObservable }) => {
      const count: PostTurnPolicy = () => {
        asked++;
        return new Observable<never>((o) => o.complete());
      };
      const b: LoopState = loopState('L');
      const c: LoopState = { ...turn(), stopRequested: 'earlier' };
      expectObservable(cold('bc|', { b, c }).pipe(postTurnPolicies([count]))).toBe('bc|', { b, c });
    });
    expect(asked).toBe(0);
  });

  it('asks about a turn that ended the run (an error message): the state stays ended, a stop is noted', () => {
    const failed: AssistantMessage = { ...emptyAssistant('m', 'p', 1), stopReason: 'error', errorMessage: 'auth: 401' };
    const asked: PostTurnContext[] = [];
    scheduler().run(({ cold, expectObservable }) => {
      const s: LoopState = { ...loopState('L', [prompt, failed]), assistant: failed, ended: 'error' };
      const note: PostTurnPolicy = (ctx) => {
        asked.push(ctx);
        return { action: 'stop', reason: 'auth failed' };
      };
      expectObservable(cold('s|', { s }).pipe(postTurnPolicies([note]))).toBe('n|', { n: { ...s, stopRequested: 'auth failed' } });
    });
    expect(asked.map((c) => c.message.stopReason)).toEqual(['error']);
  });
});
