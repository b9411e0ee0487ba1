import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { loopState, settleCall, type LoopState } from '../../../src/index.js';
import { emptyAssistant, type AssistantMessage } from '../../../src/types/message.js';
import { ProviderError } from '../../../src/types/errors.js';
import { Usage } from '../../../src/types/usage.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const model = { id: 'm', provider: 'p' };

const partial: AssistantMessage = {
  ...emptyAssistant('pm', 'pp', 0),
  content: [
    { type: 'text', text: 'half' },
    { type: 'toolCall', id: 'c1', name: 'search', arguments: {} },
  ],
};

describe('settleCall', () => {
  it('closes the partial of a failed call as an error naming the failure, keeping text and dropping the tool call', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const failure = { error: new ProviderError('network', 'socket hang up') };
      const f: LoopState = { ...loopState('L'), partial, failure };
      const closed: AssistantMessage = { ...partial, content: [{ type: 'text', text: 'half' }], stopReason: 'error', errorMessage: 'network: socket hang up' };
      expectObservable(cold('-f---|', { f }).pipe(settleCall({ model }))).toBe('-(en)|', {
        e: { type: 'MessageEnd', loopId: 'L', message: closed, timestamp: 1 },
        n: { ...f, assistant: closed },
      });
      expect(f.assistant).toBeUndefined();
    });
  });

  it('announces a message of its own (MessageStart first) when nothing streamed, naming the model asked', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const e: LoopState = loopState('L');
      const made: AssistantMessage = {
        role: 'assistant', content: [], stopReason: 'error', model: 'm', provider: 'p', usage: Usage.empty(), timestamp: 2,
        errorMessage: 'other: the provider stream completed without a final message',
      };
      expectObservable(cold('--e----|', { e }).pipe(settleCall({ model }))).toBe('--(abn)|', {
        a: { type: 'MessageStart', loopId: 'L', message: made, timestamp: 2 },
        b: { type: 'MessageEnd', loopId: 'L', message: made, timestamp: 2 },
        n: { ...e, assistant: made },
      });
    });
  });

  it('settles as aborted when the caller aborted, and a cancelled stream without abort as an empty one', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const cancelled: LoopState = { ...loopState('L'), partial, failure: { error: new ProviderError('cancelled', 'cut') } };
      const aborted = new AbortController();
      aborted.abort();
      const settled = (stopReason: string, errorMessage: string): unknown =>
        expect.objectContaining({ type: 'LoopState', assistant: expect.objectContaining({ stopReason, errorMessage }) });
      const end = expect.objectContaining({ type: 'MessageEnd' });
      expectObservable(cold('a---|', { a: cancelled }).pipe(settleCall({ model, signal: aborted.signal }))).toBe('(es)|', { e: end, s: settled('aborted', 'Aborted by the caller.') });
      expectObservable(cold('a---|', { a: cancelled }).pipe(settleCall({ model }))).toBe('(es)|', {
        e: end,
        s: settled('error', 'other: the provider stream completed without a final message'),
      });
    });
  });

  it('passes through a state that has its message or has ended', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const done: LoopState = { ...loopState('L'), assistant: emptyAssistant('m', 'p', 0), failure: { error: new Error('x') } };
      const ended: LoopState = { ...loopState('L'), ended: 'stop' };
      expectObservable(cold('-a-b|', { a: done, b: ended }).pipe(settleCall({ model }))).toBe('-a-b|', { a: done, b: ended });
    });
  });
});
