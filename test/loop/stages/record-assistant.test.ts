import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { map } from 'rxjs';
import {
  loopState, preTurnPolicies, recordAssistant, recordToolResults, recoverOverflow, type LoopState,
} from '../../../src/index.js';
import { ProviderError } from '../../../src/types/errors.js';
import type { PreTurnPolicy } from '../../../src/types/hooks.js';
import { emptyAssistant, userMessage, type AssistantMessage, type ToolResultMessage } from '../../../src/types/message.js';
import { Usage } from '../../../src/types/usage.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const history = [userMessage('hi', 0)];
const usage = { ...Usage.empty(), input: 3, output: 2, totalTokens: 5 };
const answer: AssistantMessage = { ...emptyAssistant('m', 'p', 1), content: [{ type: 'text', text: 'ok' }], usage, stopReason: 'toolUse' };
const result: ToolResultMessage = { role: 'toolResult', toolCallId: 'c', toolName: 't', content: [{ type: 'text', text: 'done' }], isError: false, timestamp: 2 };
const run = (s: LoopState): LoopState => ({ ...s, newMessages: [], sinceRequest: [], usage: Usage.empty() });

describe('recordAssistant', () => {
  it('tags the message with the turn and records it, its usage and stop reason; error ends the run; the input is not changed', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const s: LoopState = { ...run(loopState('L', history)), turnIndex: 3, assistant: answer };
      const e: LoopState = { ...s, assistant: { ...answer, stopReason: 'error' } };
      const stored = { ...answer, turnId: { loopId: 'L', turnIndex: 3 } };
      const failed = { ...e.assistant!, turnId: { loopId: 'L', turnIndex: 3 } };
      expectObservable(cold('-s-e-|', { s, e }).pipe(recordAssistant())).toBe('-a-b-|', {
        a: { ...s, assistant: stored, messages: [...history, stored], newMessages: [stored], sinceRequest: [stored], usage, lastStopReason: 'toolUse' },
        b: { ...e, assistant: failed, messages: [...history, failed], newMessages: [failed], sinceRequest: [failed], usage, lastStopReason: 'error', ended: 'error' },
      });
    });
    expect(answer).not.toHaveProperty('turnId');
  });

  it('passes a state with no message, or an ended one, through', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const n = loopState('L', history);
      const d: LoopState = { ...n, assistant: answer, ended: 'guardRail' };
      expectObservable(cold('n-d|', { n, d }).pipe(recordAssistant())).toBe('n-d|', { n, d });
    });
  });
});

describe('recordToolResults', () => {
  it('appends the results to the context and keeps them in toolResults; an aborted signal ends the run', () => {
    const aborted = new AbortController();
    aborted.abort();
    scheduler().run(({ cold, expectObservable }) => {
      const s: LoopState = { ...run(loopState('L', history)), toolResults: [result] };
      const recorded = { ...s, messages: [...history, result], newMessages: [result], sinceRequest: [result] };
      expectObservable(cold('-s-|', { s }).pipe(recordToolResults())).toBe('-r-|', { r: recorded });
      expectObservable(cold('-s-|', { s }).pipe(recordToolResults({ signal: aborted.signal }))).toBe('-r-|', { r: { ...recorded, ended: 'aborted' } });
    });
  });
});

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

describe('recoverOverflow', () => {
  const overflow = { error: ProviderError.contextOverflow('prompt is too long') };
  /** A retry that answers, to show what it was handed. */
  const retry = map((s: LoopState): LoopState => ({ ...s, assistant: answer }));

  it('runs the retry once on a context overflow, with the failure cleared; not again, not after a partial, not for other failures', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const f: LoopState = { ...loopState('L', history), failure: overflow };
      const again: LoopState = { ...f, overflowRecovered: true };
      const shown: LoopState = { ...f, partial: answer };
      const other: LoopState = { ...f, failure: { error: ProviderError.network('reset') } };
      expectObservable(cold('f-a-p-o|', { f, a: again, p: shown, o: other }).pipe(recoverOverflow(retry))).toBe('r-a-p-o|', {
        r: { type: 'LoopState', loopId: 'L', messages: history, pending: [], turnIndex: 0, newMessages: [], sinceRequest: [], usage: f.usage, overflowRecovered: true, assistant: answer },
        a: again,
        p: shown,
        o: other,
      });
    });
  });
});
