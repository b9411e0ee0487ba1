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

describe('takeSteering', () => {
  it('takes what is queued into pending and notes the turn; oncePerTurn takes nothing more in that turn', () => {
    const a = userMessage('a', 1);
    const b = userMessage('b', 2);
    scheduler().run(({ cold, expectObservable }) => {
      const s = loopState('L', history);
      const take = batches([a], [b]);
      const checkpoints = loopStages(takeSteering(take), takeSteering(take, { oncePerTurn: true }));
      expectObservable(cold('-s-|', { s }).pipe(checkpoints)).toBe('-p-|', { p: { ...s, pending: [a], steeredAt: 0 } });
    });
  });

  it('oncePerTurn takes when the turn has taken nothing yet; refused steering is announced', () => {
    const x = userMessage('my password', 1);
    scheduler().run(({ cold, expectObservable }) => {
      const s: LoopState = { ...loopState('L', history), turnIndex: 1, steeredAt: 0 };
      expectObservable(cold('-s---|', { s }).pipe(takeSteering(() => [x], { oncePerTurn: true, filters: [noSecrets] }))).toBe('-(rp)|', {
        r: { type: 'InputRejected', loopId: 'L', reason: 'no secrets', timestamp: 1 },
        p: { ...s, steeredAt: 1 },
      });
    });
  });
});
