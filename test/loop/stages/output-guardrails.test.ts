import { describe, expect, it } from 'vitest';
import { map, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { emptyAssistant, loopState, outputGuardrails, userMessage, type AssistantMessage, type Guardrail, type LoopState, type OutputGuardrailContext } from '../../../src/index.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const answer: AssistantMessage = { ...emptyAssistant('m', 'p', 0), content: [{ type: 'text', text: 'card 4111111111111111' }] };
const prompt = userMessage('my card?', 0);
/** A run that ended with its answer. */
const answered: LoopState = { ...loopState('L1', [prompt, answer]), turnIndex: 1, newMessages: [prompt, answer], ended: 'stop', output: { status: 'valid', value: { card: '4111' } } };
const pii: Guardrail<OutputGuardrailContext> = { name: 'pii', check: ({ text }) => ({ tripwire: /\d{16}/.test(text), info: 'card number' }) };

describe('outputGuardrails', () => {
  it('a trip ends the run as guardRail, withholds the structured output, and says so', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-s------|', { s: answered }).pipe(outputGuardrails([pii]))).toBe('-(Gs)---|', {
        G: { type: 'GuardrailTripped', loopId: 'L1', turnIndex: 0, guardrail: 'pii', kind: 'output', info: 'card number', timestamp: 1 },
        s: { ...answered, ended: 'guardRail', output: undefined, stoppedBy: { kind: 'guardrail', guardrail: 'pii', stage: 'output', info: 'card number' } },
      });
    });
  });

  it('all run at once: the first to trip decides, a slower one is not waited for', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const slowPass: Guardrail<OutputGuardrailContext> = { name: 'slow', check: () => timer(50).pipe(map(() => ({ tripwire: false }))) };
      const soonTrip: Guardrail<OutputGuardrailContext> = { name: 'soon', check: ({ output }) => timer(10).pipe(map(() => ({ tripwire: output !== undefined }))) };
      expectObservable(cold('s|', { s: answered }).pipe(outputGuardrails([slowPass, soonTrip]), map((o) => (o.type === 'LoopState' ? o.ended : o.type)))).toBe('10ms (GS|)', { G: 'GuardrailTripped', S: 'guardRail' });
    });
  });

  it('passing, the state goes on as it was; a run that ended without an answer is not checked', () => {
    scheduler().run(({ cold, expectObservable, flush }) => {
      let asked = 0;
      const counting: Guardrail<OutputGuardrailContext> = { name: 'count', check: () => (asked++, { tripwire: false }) };
      const aborted: LoopState = { ...answered, ended: 'aborted' };
      const failed: LoopState = { ...answered, newMessages: [prompt, { ...answer, stopReason: 'error' }] };
      expectObservable(cold('a-b-c|', { a: answered, b: aborted, c: failed }).pipe(outputGuardrails([counting]))).toBe('a-b-c|', { a: answered, b: aborted, c: failed });
      flush();
      expect(asked).toBe(1); // a only
    });
  });

  it('a guardrail that throws is a HookError and trips, unless onError is "pass"', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const broken: Guardrail<OutputGuardrailContext> = { name: 'broken', check: () => { throw new Error('down'); } };
      const hook = { type: 'HookError', loopId: 'L1', hook: 'guardrail', message: 'output guardrail "broken" failed: down', timestamp: 0 };
      expectObservable(cold('(s|)', { s: answered }).pipe(outputGuardrails([broken]), map((o) => (o.type === 'LoopState' ? o.ended : o)))).toBe('(hGS|)', {
        h: hook, G: expect.objectContaining({ type: 'GuardrailTripped', guardrail: 'broken', error: 'down' }), S: 'guardRail',
      });
      expectObservable(cold('(s|)', { s: answered }).pipe(outputGuardrails([broken], { onError: 'pass' }), map((o) => (o.type === 'LoopState' ? o.ended : o)))).toBe('(hS|)', { h: hook, S: 'stop' });
    });
  });
});
