import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { loopState, onErrorHook, type LoopState } from '../../../src/index.js';
import { emptyAssistant } from '../../../src/types/message.js';
import { ProviderError } from '../../../src/types/errors.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const settled = { ...emptyAssistant('m', 'p', 0), stopReason: 'error' as const, errorMessage: 'x' };

describe('onErrorHook', () => {
  it('reports a failed call settled as error with the failure text and the error; a throwing hook is a HookError', () => {
    const seen: Array<[string, unknown]> = [];
    const error = new ProviderError('network', 'socket hang up');
    const f: LoopState = { ...loopState('L'), failure: { error }, assistant: settled };
    scheduler().run(({ cold, expectObservable }) => {
      const hook = (text: string, e: unknown): void => {
        seen.push([text, e]);
        throw new Error('logger down');
      };
      expectObservable(cold('-f---|', { f }).pipe(onErrorHook(hook))).toBe('-(hf)|', {
        h: { type: 'HookError', loopId: 'L', hook: 'onError', message: 'logger down', timestamp: 1 },
        f,
      });
    });
    expect(seen).toEqual([['network: socket hang up', error]]);
  });

  it('does not call the hook for a success, a cut call, an aborted run, or a failure not yet settled', () => {
    let calls = 0;
    const aborted = new AbortController();
    aborted.abort();
    const ok: LoopState = { ...loopState('L'), assistant: emptyAssistant('m', 'p', 0) };
    const cut: LoopState = { ...loopState('L'), failure: { error: new ProviderError('cancelled', 'cut') }, assistant: settled };
    const unsettled: LoopState = { ...loopState('L'), failure: { error: new Error('boom') } };
    const failed: LoopState = { ...loopState('L'), failure: { error: new Error('boom') }, assistant: settled };
    scheduler().run(({ cold, expectObservable }) => {
      const hook = (): void => {
        calls++;
      };
      expectObservable(cold('abc|', { a: ok, b: cut, c: unsettled }).pipe(onErrorHook(hook))).toBe('abc|', { a: ok, b: cut, c: unsettled });
      expectObservable(cold('d|', { d: failed }).pipe(onErrorHook(hook, { signal: aborted.signal }))).toBe('d|', { d: failed });
    });
    expect(calls).toBe(0);
  });
});
