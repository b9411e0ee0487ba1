import { describe, expect, expectTypeOf, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { agentLoop, partialOutput, userMessage, type AgentEvent, type DeepPartial } from '../../src/index.js';
import { emptyAssistant, type AssistantMessage } from '../../src/types/message.js';
import { config, context } from '../agent/helpers.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

const live: AssistantMessage = emptyAssistant('m', 'p', 0);
const start = (loopId = 'L'): AgentEvent => ({ type: 'MessageStart', loopId, message: live, timestamp: 0 });
const text = (delta: string, loopId = 'L'): AgentEvent => ({ type: 'MessageUpdate', loopId, message: live, delta: { type: 'text', contentIndex: 0, delta }, timestamp: 0 });
const thinking = (delta: string): AgentEvent => ({ type: 'MessageUpdate', loopId: 'L', message: live, delta: { type: 'thinking', contentIndex: 0, delta }, timestamp: 0 });

describe('partialOutput', () => {
  it('emits the object so far each time it changes, not for deltas that change nothing visible', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const run$ = cold('-s-a-b-t-c-d-e-|', {
        s: start(),
        a: text('{"ci'), // a key cut: {} — emitted once
        b: text('ty":"Pa'),
        t: thinking('hmm'),
        c: text('ris","c":1'), // the number may go on: held back, the string grew
        d: text('8'), // still held back: nothing new
        e: text('}'),
      });
      expectObservable(run$.pipe(partialOutput())).toBe('---x-y---z---w-|', {
        x: {},
        y: { city: 'Pa' },
        z: { city: 'Paris' },
        w: { city: 'Paris', c: 18 },
      });
    });
  });

  it('a new assistant message starts over; a MessageReset starts from its message; sub-agent loops are left out', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const reset: AgentEvent = { type: 'MessageReset', loopId: 'L', message: { ...live, content: [{ type: 'text', text: '{"a":"x' }] }, reason: 'retryDiverged', timestamp: 0 };
      const child: AgentEvent = { type: 'AgentStart', agentId: 'a', sessionId: 's', loopId: 'C', parentLoopId: 'L', timestamp: 0 };
      const run$ = cold('-s-a-r-k-c-s-b-|', { s: start(), a: text('{"a":"old"'), r: reset, k: child, c: text('{"z":"child"}', 'C'), b: text('{"b":"new') });
      expectObservable(run$.pipe(partialOutput())).toBe('---x-y-------z-|', { x: { a: 'old' }, y: { a: 'x' }, z: { b: 'new' } });
    });
  });

  it('text that is not JSON emits nothing', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-s-a-|', { s: start(), a: text('Let me look that up.') }).pipe(partialOutput())).toBe('-----|');
    });
  });

  it('over a run: the partial objects of a streamed answer, typed by the schema, ending with the whole object', async () => {
    const Weather = z.object({ city: z.string(), celsius: z.number() });
    const cfg = config([{ text: '{"city":"Paris","celsius":18}', chunkSize: 6 }], { output: Weather });
    const partials$ = agentLoop([userMessage('weather?', 0)], context([]), cfg).pipe(partialOutput(Weather));
    expectTypeOf(partials$).toEqualTypeOf<import('rxjs').Observable<DeepPartial<{ city: string; celsius: number }>>>();
    // chunks: {"city | ":"Par | is","c | elsius | ":18}
    expect(await lastValueFrom(partials$.pipe(toArray()))).toEqual([{}, { city: 'Par' }, { city: 'Paris' }, { city: 'Paris', celsius: 18 }]);
  });
});
