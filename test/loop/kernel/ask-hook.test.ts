import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import {
  askHook, decideNext, limitTurns, loopStage, loopStages, loopState, takeSteering, whenTurnDue, type LoopState,
} from '../../../src/index.js';
import { InputVerdict, type InputFilter } from '../../../src/types/hooks.js';
import { emptyAssistant, textOf, userMessage, type AgentMessage, type ToolResultMessage } from '../../../src/types/message.js';

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

describe('askHook and loopStage', () => {
  it('a stage from a step: the hook answer decides the state; a throwing hook is reported by name and counts as the fallback', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const s = loopState('L', history);
      const gate = (answer: () => boolean): ReturnType<typeof loopStage> =>
        loopStage((state) => askHook('gate', state.loopId, answer, true, { now: () => 7 } as never, (go) => (go ? state : { ...state, ended: 'userStop' })));
      expectObservable(cold('-s|', { s }).pipe(gate(() => false))).toBe('-e|', { e: { ...s, ended: 'userStop' } });
      expectObservable(cold('-s---|', { s }).pipe(gate(() => { throw new Error('gate bug'); }))).toBe('-(hs)|', {
        h: { type: 'HookError', loopId: 'L', hook: 'gate', message: 'gate bug', timestamp: 7 },
        s,
      });
    });
  });

  it('loopStages leaves out stages that are not there', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const s = loopState('L', history);
      const next = loopStage((state) => ({ ...state, turnIndex: state.turnIndex + 1 }));
      expectObservable(cold('-s|', { s }).pipe(loopStages(next, false, undefined, null, next))).toBe('-t|', { t: { ...s, turnIndex: 2 } });
    });
  });
});
