import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { of } from 'rxjs';
import { buildRequest, loopState, startTurn, type LoopState } from '../../../src/index.js';
import { emptyAssistant, toLlmMessages, userMessage, type AssistantMessage, type ToolResultMessage } from '../../../src/types/message.js';
import { DEFAULT_CACHE_CONFIG } from '../../../src/types/config.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

const history = [userMessage('earlier', 0)];
const prompt = userMessage('hi', 1);
const answer: AssistantMessage = { ...emptyAssistant('m', 'p', 2), content: [{ type: 'text', text: 'hello' }], stopReason: 'toolUse' };
const result: ToolResultMessage = { role: 'toolResult', toolCallId: 'c', toolName: 't', content: [{ type: 'text', text: 'ok' }], isError: false, timestamp: 3 };

describe('startTurn', () => {
  it('emits TurnStart, moves the pending messages into the context (tagged with the turn), clears last turn', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const s: LoopState = { ...loopState('L', history, [prompt]), turnIndex: 2, assistant: answer, toolResults: [result] };
      const tagged = { ...prompt, turnId: { loopId: 'L', turnIndex: 2 } };
      expectObservable(cold('-s-----|', { s }).pipe(startTurn())).toBe('-(tabn)|', {
        t: { type: 'TurnStart', loopId: 'L', turnIndex: 2, timestamp: 1, triggeredBy: 'continuation' },
        a: { type: 'MessageStart', loopId: 'L', message: tagged, timestamp: 1 },
        b: { type: 'MessageEnd', loopId: 'L', message: tagged, timestamp: 1 },
        n: { type: 'LoopState', loopId: 'L', messages: [...history, tagged], pending: [], turnIndex: 2, newMessages: [tagged], sinceRequest: [tagged], usage: s.usage },
      });
      expect(s.pending).toEqual([prompt]);
    });
  });

  it('passes an ended run through', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const e: LoopState = { ...loopState('L'), ended: 'stop' };
      expectObservable(cold('-e|', { e }).pipe(startTurn())).toBe('-e|', { e });
    });
  });

  it('turn 0 is triggered by what the state\'s run says (user without one, the option above both); later turns by continuation', () => {
    const trigger = (s: LoopState, options = {}): string[] => {
      const out: string[] = [];
      of(s).pipe(startTurn(options)).subscribe((o) => o.type === 'TurnStart' && out.push(o.triggeredBy));
      return out;
    };
    const branch = loopState('L', [], [], { agentId: 'A', sessionId: 'S', firstTrigger: 'branch' });
    expect(trigger(branch)).toEqual(['branch']);
    expect(trigger(loopState('L'))).toEqual(['user']);
    expect(trigger(branch, { firstTrigger: 'continuation' })).toEqual(['continuation']);
    expect(trigger({ ...branch, turnIndex: 1 })).toEqual(['continuation']);
  });
});

describe('buildRequest', () => {
  it('sets the request from the context: messages as the model sees them, tool definitions', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const model = { id: 'm', api: 'openai-completions', provider: 'p' } as const;
      const tool = { name: 't', label: 't', description: 'a tool', parameters: { type: 'object' }, execute: () => 'x' };
      const s = loopState('L', history);
      expectObservable(cold('-s|', { s }).pipe(buildRequest({ model, systemPrompt: 'sys', tools: [tool] }))).toBe('-r|', {
        r: {
          ...s,
          request: {
            model, systemPrompt: 'sys', thinkingLevel: 'off', cacheConfig: DEFAULT_CACHE_CONFIG,
            tools: [{ name: 't', description: 'a tool', parameters: { type: 'object' } }], messages: toLlmMessages(history),
          },
        },
      });
    });
  });
});
