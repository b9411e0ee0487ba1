import { describe, expect, it } from 'vitest';
import { map, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { z } from 'zod';
import { defineTool, loopState, ModelRoutes, prepareTurn, TurnTools, userMessage, type LoopState, type StreamRequest } from '../../../src/index.js';
import { scriptedModel, scriptedProvider } from '../../../src/testing/index.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const add = defineTool({ name: 'add', description: 'Adds', parameters: z.object({ a: z.number() }), execute: () => '1' });
const search = defineTool({ name: 'search', description: 'Searches', parameters: z.object({ q: z.string() }), execute: () => 'r' });
const tools = [add, search];
const model = { ...scriptedModel('a'), apiKey: 'sk-a' };
const prompt = userMessage('hi', 0);
const request: StreamRequest = {
  model, apiKey: 'sk-a', systemPrompt: 'base', messages: [prompt], thinkingLevel: 'off', cacheConfig: { enabled: false, strategy: { kind: 'disabled' } },
  tools: tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
};
const state: LoopState = { ...loopState('L1', [prompt]), request };

describe('prepareTurn', () => {
  it('applies the answer to this turn\'s request: tools, system prompt, messages', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const turnTools = new TurnTools();
      const stage = prepareTurn(() => ({ activeTools: ['search'], systemPrompt: 'search first', messages: [userMessage('only this', 0)] }), { tools, turnTools });
      expectObservable(cold('-s|', { s: state }).pipe(stage, map((o) => (o.type === 'LoopState' ? [o.request!.tools.map((t) => t.name), o.request!.systemPrompt, o.request!.messages.length, turnTools.of(o)?.map((t) => t.name)] : o))))
        .toBe('-s|', { s: [['search'], 'search first', 1, ['search']] });
    });
  });

  it('an answer of undefined leaves the request as built; toolChoice "none" offers no tool', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('s|', { s: state }).pipe(prepareTurn(() => undefined, { tools }))).toBe('s|', { s: state });
      expectObservable(cold('s|', { s: state }).pipe(prepareTurn(() => ({ toolChoice: 'none' }), { tools }), map((o) => (o.type === 'LoopState' ? o.request!.tools : o)))).toBe('s|', { s: [] });
    });
  });

  it('toolChoice "required" or { tool } forces a call of a tool offered this turn; a tool not offered fails the stage', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const choice = (prepare: Parameters<typeof prepareTurn>[0]) => cold('s|', { s: state }).pipe(prepareTurn(prepare, { tools }), map((o) => (o.type === 'LoopState' ? o.request!.toolChoice : o)));
      expectObservable(choice(() => ({ toolChoice: 'required' }))).toBe('s|', { s: 'required' });
      expectObservable(choice(() => ({ activeTools: ['search'], toolChoice: { tool: 'search' } }))).toBe('s|', { s: { tool: 'search' } });
      expectObservable(choice(() => ({ activeTools: ['search'], toolChoice: { tool: 'add' } })))
        .toBe('#', undefined, expect.objectContaining({ message: 'prepareTurn answered: toolChoice: no tool named "add" is offered this turn' }));
    });
  });

  it('waits for an answer that comes later (an Observable, in virtual time)', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const later = () => timer(7).pipe(map(() => ({ systemPrompt: 'later' })));
      expectObservable(cold('s|', { s: state }).pipe(prepareTurn(later, { tools }), map((o) => (o.type === 'LoopState' ? o.request!.systemPrompt : o)))).toBe('7ms (s|)', { s: 'later' });
    });
  });

  it('another model: the request names it, without the configured key; its provider serves it through the routes', () => {
    scheduler().run(({ cold, expectObservable, flush }) => {
      const primary = scriptedProvider([]);
      const other = scriptedProvider([{ text: 'b speaks' }]);
      const b = { ...scriptedModel('b'), provider: 'other' };
      const routes = new ModelRoutes(model, primary, () => {
        throw new Error('not from the registry');
      });
      const stage = prepareTurn(() => ({ model: { model: b, provider: other } }), { tools, routes });
      let prepared: StreamRequest | undefined;
      expectObservable(cold('s|', { s: state }).pipe(stage, map((o) => (o.type === 'LoopState' ? ((prepared = o.request), [o.request!.model.id, 'apiKey' in o.request!]) : o)))).toBe('s|', { s: ['b', false] });
      flush();
      routes.provider(prepared!, {}).subscribe();
      expect(other.requests).toHaveLength(1);
      expect(primary.requests).toHaveLength(0);
    });
  });

  it('a prepare that throws is a HookError and the request goes as built; an unknown tool fails the stage', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const broken = (): never => {
        throw new Error('no table');
      };
      expectObservable(cold('(s|)', { s: state }).pipe(prepareTurn(broken, { tools }))).toBe('(hs|)', {
        h: { type: 'HookError', loopId: 'L1', hook: 'prepareTurn', message: 'no table', timestamp: 0 }, s: state,
      });
      expectObservable(cold('s|', { s: state }).pipe(prepareTurn(() => ({ activeTools: ['add', 'nope'] }), { tools })))
        .toBe('#', undefined, expect.objectContaining({ message: 'prepareTurn answered: activeTools[1]: no tool named "nope" (tools: add, search)' }));
    });
  });
});
