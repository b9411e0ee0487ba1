/**
 * decideNext's post-loop policies, one after the other: a `stop` ends the run there (the policies after it are not
 * asked), an `inject` queues its messages for another turn (the policies after it are not asked either).
 */
import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { decideNext, loopState, type LoopState } from '../../../src/index.js';
import type { PostLoopPolicy } from '../../../src/types/hooks.js';
import { emptyAssistant, userMessage } from '../../../src/types/message.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const answered = [userMessage('hi', 0), { ...emptyAssistant('m', 'p', 1), content: [{ type: 'text' as const, text: 'hello' }] }];

describe('decideNext: post-loop policies in order', () => {
  it('a stop ends the run and the policies after it are not asked; after an inject neither', () => {
    const asked: string[] = [];
    const more = userMessage('one more thing', 4);
    const stopper: PostLoopPolicy = () => (asked.push('stop'), { action: 'stop', reason: 'done' });
    const injector: PostLoopPolicy = () => (asked.push('inject'), { action: 'inject', messages: [more] });
    const later: PostLoopPolicy = () => (asked.push('later'), { action: 'inject', messages: [more] });
    scheduler().run(({ cold, expectObservable, flush }) => {
      const d: LoopState = { ...loopState('L', answered), newMessages: [], lastStopReason: 'length' };
      expectObservable(cold('d|', { d }).pipe(decideNext({ postLoop: [stopper, later] }))).toBe('e|', { e: { ...d, ended: 'length' } });
      expectObservable(cold('d|', { d }).pipe(decideNext({ postLoop: [injector, later] }))).toBe('p|', { p: { ...d, pending: [more] } });
      flush();
    });
    expect(asked).toEqual(['stop', 'inject']);
  });

  it('continue asks the next policy; with every policy saying continue the run ends on its last stop reason, or stop', () => {
    const asked: number[] = [];
    const go = (n: number): PostLoopPolicy => () => (asked.push(n), { action: 'continue' });
    scheduler().run(({ cold, expectObservable }) => {
      const d: LoopState = { ...loopState('L', answered), newMessages: [] };
      expectObservable(cold('d|', { d }).pipe(decideNext({ postLoop: [go(1), go(2)] }))).toBe('e|', { e: { ...d, ended: 'stop' } });
    });
    expect(asked).toEqual([1, 2]);
  });

  it('the policies see the run messages and what this run added', () => {
    const seen: unknown[] = [];
    const policy: PostLoopPolicy = (ctx) => (seen.push(ctx), { action: 'continue' });
    scheduler().run(({ cold, expectObservable }) => {
      const d: LoopState = { ...loopState('L', answered), newMessages: answered.slice(1), lastStopReason: 'stop' };
      const fresh: LoopState = loopState('L', answered);
      expectObservable(cold('d-f|', { d, f: fresh }).pipe(decideNext({ postLoop: [policy] }))).toBe('e-g|', {
        e: { ...d, ended: 'stop' },
        g: { ...fresh, ended: 'stop' },
      });
    });
    expect(seen).toEqual([
      { messages: answered, newMessages: answered.slice(1) },
      { messages: answered, newMessages: [] },
    ]);
  });
});
