import { describe, expect, it } from 'vitest';
import { finalize, map, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { callModel, inputGuardrails, loopState, type Guardrail, type InputGuardrailContext, type LoopState, userMessage } from '../../../src/index.js';
import { scriptedModel, scriptedProvider } from '../../../src/testing/index.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const model = scriptedModel();
const prompt = userMessage('hi', 0);
/** A run's first call: a request, the prompt in the context and on the run (a new run each time: a run's first call is guarded once). */
const first = (): LoopState => ({
  ...loopState('L1', [prompt]),
  request: { model, systemPrompt: '', messages: [prompt], tools: [], thinkingLevel: 'off', cacheConfig: { enabled: false, strategy: { kind: 'disabled' } } },
  run: { agentId: 'a', sessionId: 's', firstTrigger: 'user', prompts: [prompt] },
});
/** A guardrail that answers after `ms` virtual ms. */
const after = (name: string, ms: number, tripwire: boolean, mode?: 'parallel' | 'blocking'): Guardrail<InputGuardrailContext> =>
  ({ name, check: () => timer(ms).pipe(map(() => ({ tripwire }))), ...(mode ? { mode } : {}) });
/** The message starts at 10 ms, a text delta every 10 ms after (three), then its end. */
const slowly = () => scriptedProvider([{ text: 'abcdef', chunkSize: 2, delay: 10, chunkDelay: 10 }]);

describe('inputGuardrails', () => {
  it('a parallel guardrail that trips mid-stream cuts the call: nothing of the stream after the trip, the stop message closes it', () => {
    scheduler().run(({ cold, expectObservable, flush }) => {
      let cutAt = -1;
      const provider = slowly();
      const cutting = Object.assign((r: Parameters<typeof provider>[0], o: Parameters<typeof provider>[1]) => provider(r, o).pipe(finalize(() => (cutAt = o.scheduler!.now()))), {});
      const stage = inputGuardrails([after('topic', 25, true)], callModel({ provider: cutting, retry: { maxRetries: 0 } }), { model });
      const out = cold('s|', { s: first() }).pipe(stage);
      expectObservable(out.pipe(map((o) => (o.type === 'LoopState' ? 'S' : o.type === 'GuardrailTripped' ? 'G' : o.type === 'MessageStart' ? 'M' : o.type === 'MessageEnd' ? 'm' : o.type === 'MessageUpdate' ? 'u' : '?'))))
        .toBe('10ms M 9ms u 4ms (GmS|)');
      flush();
      expect(cutAt).toBe(25);
    });
  });

  it('the trip leaves the stop message as the turn\'s answer, and stoppedBy', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const stage = inputGuardrails([after('topic', 5, true)], callModel({ provider: slowly(), retry: { maxRetries: 0 } }), { model });
      const stop = expect.objectContaining({ role: 'assistant', stopReason: 'guardRail', content: [{ type: 'text', text: '[Stopped by guardrail: topic]' }] });
      expectObservable(cold('s|', { s: first() }).pipe(stage)).toBe('5ms (GMmS|)', {
        G: { type: 'GuardrailTripped', loopId: 'L1', turnIndex: 0, guardrail: 'topic', kind: 'input', timestamp: 5 },
        M: expect.objectContaining({ type: 'MessageStart', message: stop }),
        m: expect.objectContaining({ type: 'MessageEnd', message: stop }),
        S: expect.objectContaining({ assistant: stop, partial: stop, request: undefined, stoppedBy: { kind: 'guardrail', guardrail: 'topic', stage: 'input' } }),
      });
    });
  });

  it('blocking guardrails run before the call; the call starts once they all passed', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const provider = slowly();
      const stage = inputGuardrails([after('a', 5, false, 'blocking'), after('b', 15, false, 'blocking')], callModel({ provider, retry: { maxRetries: 0 } }), { model });
      // The call starts at 15: its message at 25, three deltas, its end at 65.
      const out = cold('s|', { s: first() }).pipe(stage, map((o) => (o.type === 'LoopState' ? 'S' : o.type === 'MessageStart' ? 'M' : o.type === 'MessageEnd' ? 'm' : 'u')));
      expectObservable(out).toBe('25ms M 9ms u 9ms u 9ms u 9ms (mS|)');
    });
  });

  it('a call that ends before its parallel guardrails waits for them; passing, it is handed on as it was', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const stage = inputGuardrails([after('slow', 60, false)], callModel({ provider: slowly(), retry: { maxRetries: 0 } }), { model });
      const out = cold('s|', { s: first() }).pipe(stage, map((o) => (o.type === 'LoopState' ? (o.assistant?.stopReason ?? '?') : o.type === 'MessageStart' ? 'M' : o.type === 'MessageEnd' ? 'm' : 'u')));
      expectObservable(out).toBe('10ms M 9ms u 9ms u 9ms u 9ms m 9ms (S|)', { M: 'M', u: 'u', m: 'm', S: 'stop' });
    });
  });

  it('is asked once per run: a later state of the run goes straight to the call', () => {
    scheduler().run(({ cold, expectObservable, flush }) => {
      let asked = 0;
      const counting: Guardrail<InputGuardrailContext> = { name: 'count', check: () => (asked++, { tripwire: false }) };
      const provider = scriptedProvider([{ text: 'one' }, { text: 'two' }]);
      const stage = inputGuardrails([counting], callModel({ provider, retry: { maxRetries: 0 } }), { model });
      const s = first();
      const out = cold('s-------s-------|', { s }).pipe(stage, map((o) => (o.type === 'LoopState' ? 'S' : o.type === 'MessageStart' ? 'M' : o.type === 'MessageEnd' ? 'm' : 'u')));
      expectObservable(out).toBe('(MumS)--(MumS)--|');
      flush();
      expect(asked).toBe(1);
    });
  });
});
