import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { map, timer } from 'rxjs';
import {
  allOf, anyOf, costOver, emptyAssistant, loopState, type LoopState, stopWhen, textMatches, tokensOver, toolCalled, turnCount,
  Usage, type AssistantMessage, type StopContext, type ToolResultMessage,
} from '../../../src/index.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

const calling = (name: string, text = ''): AssistantMessage => ({
  ...emptyAssistant('m', 'p', 0), stopReason: 'toolUse', content: [{ type: 'text', text }, { type: 'toolCall', id: `c-${name}`, name, arguments: {} }],
});
const result: ToolResultMessage = { role: 'toolResult', toolCallId: 'c-search', toolName: 'search', content: [{ type: 'text', text: 'found' }], isError: false, timestamp: 0 };
/** The state `endTurn` leaves after turn `turns - 1`: the turn's message, its tool results, the index moved on. */
const after = (turns: number, assistant: AssistantMessage = calling('search'), usage = Usage.empty()): LoopState =>
  ({ ...loopState('L1'), turnIndex: turns, assistant, toolResults: [result], usage, newMessages: [assistant, result] });

const ctx = (over: Partial<StopContext>): StopContext => ({
  turns: 1, turnIndex: 0, assistant: undefined, toolResults: [], messages: [], newMessages: [], usage: Usage.empty(), cost: 0, ...over,
});

describe('the ready-made stop conditions', () => {
  it('turnCount(n) holds once n turns ran; toolCalled looks at the turn\'s own calls; textMatches at its text', () => {
    expect([1, 2, 3].map((turns) => turnCount(2)(ctx({ turns })))).toEqual([false, true, true]);
    expect(toolCalled('submit')(ctx({ assistant: calling('submit') }))).toBe(true);
    expect(toolCalled('submit')(ctx({ assistant: calling('search') }))).toBe(false);
    const global = /FINAL/g; // a global RegExp's lastIndex must not make the second ask differ
    const says = ctx({ assistant: calling('x', 'FINAL: 4') });
    expect([textMatches(global)(says), textMatches(global)(says), textMatches('FINAL')(says), textMatches(/final/)(says)]).toEqual([true, true, true, false]);
  });

  it('tokensOver and costOver read the run\'s usage and cost; each names itself', () => {
    const usage = { ...Usage.empty(), input: 900, output: 200, totalTokens: 1100 };
    expect([tokensOver(1000)(ctx({ usage })), tokensOver(2000)(ctx({ usage }))]).toEqual([true, false]);
    expect([costOver(0.5)(ctx({ cost: 0.51 })), costOver(0.5)(ctx({ cost: 0.5 }))]).toEqual([true, false]);
    expect([turnCount(3), toolCalled('a'), costOver(1), tokensOver(5), textMatches(/x/i)].map((c) => c.label))
      .toEqual(['turnCount(3)', 'toolCalled(a)', 'costOver(1)', 'tokensOver(5)', 'textMatches(/x/i)']);
  });

  it('anyOf holds when one does, allOf when all do; both stop asking once decided', () => {
    const asked: string[] = [];
    const spy = (name: string, answer: boolean) => Object.assign(() => (asked.push(name), answer), { label: name });
    expect(anyOf(spy('a', false), spy('b', true), spy('c', true))(ctx({}))).toBe(true);
    expect(allOf(spy('d', true), spy('e', false), spy('f', true))(ctx({}))).toBe(false);
    expect(asked).toEqual(['a', 'b', 'd', 'e']);
    expect(anyOf(turnCount(1), allOf(toolCalled('x'), tokensOver(2))).label).toBe('anyOf(turnCount(1), allOf(toolCalled(x), tokensOver(2)))');
  });

  it('bad arguments are refused at once, naming the condition', () => {
    expect(() => turnCount(-1)).toThrow('turnCount: expected a finite number >= 0, got -1');
    expect(() => toolCalled('')).toThrow('toolCalled: expected a tool name');
    expect(() => stopWhen([turnCount(1), 'x' as never])).toThrow('stopWhen[1]: expected a stop condition (a function), got string');
  });
});

describe('stopWhen', () => {
  it('ends the run after the turn a condition holds on, naming it; earlier turns pass', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const first = after(1);
      const second = after(2);
      expectObservable(cold('-a-b|', { a: first, b: second }).pipe(stopWhen(turnCount(2)))).toBe('-a-b|', {
        a: first,
        b: { ...second, ended: 'userStop', stoppedBy: { kind: 'stopWhen', condition: 'turnCount(2)' } },
      });
    });
  });

  it('an array is any of its conditions: the first that holds is named', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const s = after(1, calling('submit'));
      expectObservable(cold('-s|', { s }).pipe(stopWhen([turnCount(5), toolCalled('submit'), turnCount(1)]))).toBe('-s|', {
        s: { ...s, ended: 'userStop', stoppedBy: { kind: 'stopWhen', condition: 'toolCalled(submit)' } },
      });
    });
  });

  it('is not asked after a turn that ends the run by itself, nor on an ended run', () => {
    scheduler().run(({ cold, expectObservable }) => {
      let asked = 0;
      const always = () => (asked++, true);
      const answered: LoopState = { ...after(1, emptyAssistant('m', 'p', 0)), toolResults: [] };
      const ended: LoopState = { ...after(1), ended: 'aborted' };
      expectObservable(cold('-a-e|', { a: answered, e: ended }).pipe(stopWhen(always))).toBe('-a-e|', { a: answered, e: ended });
      expect(asked).toBe(0);
    });
  });

  it('waits for a condition that answers later (an Observable, in virtual time)', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const s = after(1);
      const later = Object.assign(() => timer(5).pipe(map(() => true)), { label: 'judge' });
      expectObservable(cold('-s|', { s }).pipe(stopWhen(anyOf(() => false, later)))).toBe('------(s|)', {
        s: { ...s, ended: 'userStop', stoppedBy: { kind: 'stopWhen', condition: 'anyOf(stopWhen[0], judge)' } },
      });
    });
  });

  it('a condition that throws is a HookError and does not hold; the next is asked', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const s = after(1);
      const broken = (): boolean => {
        throw new Error('no budget service');
      };
      expectObservable(cold('-s-----|', { s }).pipe(stopWhen([broken, turnCount(1)]))).toBe('-(hs)--|', {
        h: { type: 'HookError', loopId: 'L1', hook: 'stopWhen', message: 'no budget service', timestamp: 1 },
        s: { ...s, ended: 'userStop', stoppedBy: { kind: 'stopWhen', condition: 'turnCount(1)' } },
      });
    });
  });

  it('costOver prices the run with the stage\'s pricing (per message with a function)', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const priced: AssistantMessage = { ...calling('search'), usage: { ...Usage.empty(), input: 1_000_000, totalTokens: 1_000_000 } };
      const s = after(1, priced, priced.usage);
      const stage = stopWhen(costOver(2), { pricing: () => ({ input: 3, output: 15 }) }); // $3 for a million input tokens
      expectObservable(cold('-s|', { s }).pipe(stage)).toBe('-s|', { s: { ...s, ended: 'userStop', stoppedBy: { kind: 'stopWhen', condition: 'costOver(2)' } } });
    });
  });
});
