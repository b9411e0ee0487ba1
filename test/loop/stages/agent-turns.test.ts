import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { activeAgents, agentTurns, loopStage, loopState, type LoopState, type TeamMember } from '../../../src/index.js';
import { emptyAssistant, userMessage, type AssistantMessage, type ToolResultMessage } from '../../../src/types/message.js';
import { stateWith } from '../../../src/loop/kernel/state-with.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const call: AssistantMessage = { ...emptyAssistant('m', 'p', 0), content: [{ type: 'toolCall', id: 'c1', name: 'to_b', arguments: { reason: 'r' } }], stopReason: 'toolUse' };
const handed: ToolResultMessage = { role: 'toolResult', toolCallId: 'c1', toolName: 'to_b', content: [{ type: 'text', text: 'Handed off to b.' }], isError: false, timestamp: 0 };
const member = (name: string, handoffs: TeamMember['handoffs'] = new Map()): TeamMember => ({ name, tools: [], systemPrompt: name, config: {} as TeamMember['config'], provider: (() => undefined) as never, handoffs });
const history = [userMessage('hi', 0)];

describe('agentTurns', () => {
  it('runs the active agent\'s turn; a successful handoff call switches agents (Handoff after the turn), a failed one does not', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const team = new Map([['a', member('a', new Map([['to_b', { to: 'b' }]]))], ['b', member('b')]]);
      const turnOf = (name: string, results: readonly ToolResultMessage[]) =>
        loopStage((s) => stateWith(s, { turnIndex: s.turnIndex + 1, messages: [...s.messages, userMessage(name, 0)], assistant: call, toolResults: results }));
      const stage = agentTurns(new Map([['a', turnOf('a', [handed])], ['b', turnOf('b', [])]]), { team, active: activeAgents('a') });
      const s = loopState('L', history);
      const a1 = stateWith(s, { turnIndex: 1, messages: [...history, userMessage('a', 0)], assistant: call, toolResults: [handed] });
      const b2 = stateWith(a1, { turnIndex: 2, messages: [...a1.messages, userMessage('b', 0)], toolResults: [] });
      expectObservable(cold('-s----t-|', { s, t: a1 }).pipe(stage)).toBe('-(ha)-b-|', {
        h: { type: 'Handoff', loopId: 'L', turnIndex: 1, from: 'a', to: 'b', toolCallId: 'c1', toolName: 'to_b', arguments: { reason: 'r' }, timestamp: 1 },
        a: a1,
        b: b2,
      });
    });
  });

  it('an inputFilter shapes the next agent\'s context; one that keeps nothing to answer is a HookError that ends the run', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const drop = (s: LoopState) => s.messages.slice(0, 1);
      const keepAnswer = () => [userMessage('hi', 0), call];
      for (const [filter, marbles, out] of [
        [drop, '-(ha)-|', (a1: LoopState) => stateWith(a1, { messages: history })],
        [keepAnswer, '-(hea)|', (a1: LoopState) => stateWith(a1, { ended: 'error' })],
      ] as const) {
        const team = new Map([['a', member('a', new Map([['to_b', { to: 'b', inputFilter: (input: { messages: readonly unknown[] }) => filter(input as never) }]]))], ['b', member('b')]]);
        const turn = loopStage((s) => stateWith(s, { turnIndex: 1, assistant: call, toolResults: [handed], messages: [...s.messages, call, handed] }));
        const stage = agentTurns(new Map([['a', turn], ['b', turn]]), { team: team as never, active: activeAgents('a') });
        const s = loopState('L', history);
        const a1 = stateWith(s, { turnIndex: 1, assistant: call, toolResults: [handed], messages: [...history, call, handed] });
        expectObservable(cold('-s----|', { s }).pipe(stage)).toBe(marbles, {
          h: expect.objectContaining({ type: 'Handoff', from: 'a', to: 'b' }),
          e: expect.objectContaining({ type: 'HookError', hook: 'handoff.inputFilter' }),
          a: out(a1),
        });
      }
    });
  });
});
