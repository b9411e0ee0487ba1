import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { map } from 'rxjs';
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

describe('whenTurnDue', () => {
  const turn = map((s: LoopState): LoopState => ({ ...s, turnIndex: s.turnIndex + 1 }));

  it('runs the turn for pending messages or a context that does not end with an answer, with last turn cleared; else passes on', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const p: LoopState = { ...loopState('L', answered, [userMessage('more', 3)]), toolResults: [result] };
      const q: LoopState = loopState('L', history);
      const a: LoopState = { ...loopState('L', answered), toolResults: [result], stopRequested: 'x' };
      expectObservable(cold('p-q-a|', { p, q, a }).pipe(whenTurnDue(turn))).toBe('x-y-z|', {
        x: { ...loopState('L', answered, p.pending), turnIndex: 1 },
        y: { ...q, turnIndex: 1 },
        z: loopState('L', answered),
      });
    });
  });
});
