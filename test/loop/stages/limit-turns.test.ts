import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { limitTurns, loopState, type LoopState } from '../../../src/index.js';
import { emptyAssistant, type AssistantMessage } from '../../../src/types/message.js';
import { Usage, type CostConfig } from '../../../src/types/usage.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

const answered = (provider: string, input: number): AssistantMessage => ({ ...emptyAssistant(`${provider}-model`, provider, 0), usage: { ...Usage.empty(), input, totalTokens: input } });
const cheap = answered('cheap', 100_000);
const pricey = answered('pricey', 100_000);
const state: LoopState = { ...loopState('L1'), turnIndex: 2, newMessages: [cheap, pricey], usage: Usage.combine(cheap.usage, pricey.usage) };
const rates: Record<string, CostConfig> = { cheap: { input: 1, output: 1 }, pricey: { input: 10, output: 10 } }; // $ per million tokens

describe('limitTurns with pricing per message', () => {
  it('prices each assistant message by its own model: $0.10 + $1.00 is over a $1 limit, where one price for all would not be', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const perModel = limitTurns({ maxCost: 1 }, { pricing: (m) => rates[m.provider] });
      expectObservable(cold('(s|)', { s: state }).pipe(perModel)).toBe('(abs|)', {
        a: expect.objectContaining({ type: 'MessageStart', message: expect.objectContaining({ content: [{ type: 'text', text: '[Agent stopped: Max cost reached ($1.1000/$1.0000)]' }] }) }),
        b: expect.objectContaining({ type: 'MessageEnd' }),
        s: expect.objectContaining({ ended: 'guardRail' }),
      });
      const onePrice = limitTurns({ maxCost: 1 }, { pricing: rates.cheap! });
      expectObservable(cold('(s|)', { s: state }).pipe(onePrice)).toBe('(s|)', { s: { ...state, startedAt: 0 } });
    });
  });
});
