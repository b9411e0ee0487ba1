import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import {
  loopState, preTurnPolicies, recordAssistant, recordToolResults, recoverOverflow, type LoopState,
} from '../../../src/index.js';
import type { PreTurnPolicy } from '../../../src/types/hooks.js';
import { emptyAssistant, userMessage, type AssistantMessage, type ToolResultMessage } from '../../../src/types/message.js';
import { Usage } from '../../../src/types/usage.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const history = [userMessage('hi', 0)];
const usage = { ...Usage.empty(), input: 3, output: 2, totalTokens: 5 };
const answer: AssistantMessage = { ...emptyAssistant('m', 'p', 1), content: [{ type: 'text', text: 'ok' }], usage, stopReason: 'toolUse' };
const result: ToolResultMessage = { role: 'toolResult', toolCallId: 'c', toolName: 't', content: [{ type: 'text', text: 'done' }], isError: false, timestamp: 2 };
const run = (s: LoopState): LoopState => ({ ...s, newMessages: [], sinceRequest: [], usage: Usage.empty() });

describe('preTurnPolicies', () => {
  const model = { id: 'm', provider: 'p' };

  it('inject adds messages to the context in the turn, announced; the next policy sees them as new; stop ends as guardRail with a message', () => {
    const seen: number[] = [];
    const note = userMessage('remember the budget', 5);
    const inject: PreTurnPolicy = () => ({ action: 'inject', messages: [note] });
    const stop: PreTurnPolicy = (ctx) => {
      seen.push(ctx.newMessages.length);
      return { action: 'stop', reason: 'over budget' };
    };
    scheduler().run(({ cold, expectObservable }) => {
      const s: LoopState = { ...run(loopState('L', history)), sinceRequest: [history[0]!], turnIndex: 1 };
      const tagged = { ...note, turnId: { loopId: 'L', turnIndex: 1 } };
      const stopped = {
        role: 'assistant', content: [{ type: 'text', text: '[Stopped by policy: over budget]' }], stopReason: 'guardRail', model: 'm', provider: 'p',
        usage: Usage.empty(), timestamp: 1, errorMessage: 'over budget', turnId: { loopId: 'L', turnIndex: 1 },
      };
      expectObservable(cold('-s------|', { s }).pipe(preTurnPolicies([inject, stop], { model }))).toBe('-(abcdx)|', {
        a: { type: 'MessageStart', loopId: 'L', message: tagged, timestamp: 1 },
        b: { type: 'MessageEnd', loopId: 'L', message: tagged, timestamp: 1 },
        c: { type: 'MessageStart', loopId: 'L', message: stopped, timestamp: 1 },
        d: { type: 'MessageEnd', loopId: 'L', message: stopped, timestamp: 1 },
        x: {
          ...s, messages: [...history, tagged, stopped], newMessages: [tagged, stopped], sinceRequest: [history[0], tagged, stopped],
          assistant: stopped, ended: 'guardRail',
        },
      });
    });
    expect(seen).toEqual([2]);
  });

  it('a policy that fails is a HookError and counts as continue', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const s = run(loopState('L', history));
      const broken: PreTurnPolicy = () => cold('--#', {}, new Error('policy down'));
      expectObservable(cold('s-----|', { s }).pipe(preTurnPolicies([broken], { model }))).toBe('--(hs)|', {
        h: { type: 'HookError', loopId: 'L', hook: 'preTurn', message: 'policy down', timestamp: 2 },
        s,
      });
    });
  });
});
