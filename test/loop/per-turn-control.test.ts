import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentLoop, defineTool, textOf, toolCalled, turnCount, userMessage, type AssistantMessage, type PrepareTurnContext } from '../../src/index.js';
import { scriptedModel, scriptedProvider } from '../../src/testing/index.js';
import { addTool, agentEnd, config, context, events, run, trace } from '../agent/helpers.js';

const toolCycle = [
  { text: 'adding', toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
  { text: 'again', toolCalls: [{ name: 'add', arguments: { a: 3, b: 4 } }] },
  { text: 'done' },
];

describe('stopWhen in the loop', () => {
  it('ends the run after the turn whose tool call it names: no second model call, the stop reason on AgentEnd', async () => {
    const cfg = config(toolCycle, { stopWhen: toolCalled('add') });
    expect(await trace(agentLoop([userMessage('hi', 0)], context([addTool]), cfg))).toEqual([
      'AgentStart',
      'TurnStart:0', 'MessageStart:user', 'MessageEnd:user', // the prompt
      'MessageStart:assistant', 'MessageEnd:assistant', // the call of add
      'ToolExecutionStart:add', 'ToolExecutionEnd:add', 'MessageStart:toolResult', 'MessageEnd:toolResult', // its result
      'TurnEnd',
      'AgentEnd:userStop', // no second turn
    ]);
    expect(cfg.provider.requests).toHaveLength(1);
    const end = agentEnd(await run(toolCycle, [addTool], { stopWhen: toolCalled('add') }));
    expect(end.stoppedBy).toEqual({ kind: 'stopWhen', condition: 'toolCalled(add)' });
    expect(end.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult']);
  });

  it('an array is any of its conditions; a run that answers before one holds ends as usual', async () => {
    const two = agentEnd(await run(toolCycle, [addTool], { stopWhen: [toolCalled('search'), turnCount(2)] }));
    expect(two).toMatchObject({ stopReason: 'userStop', stoppedBy: { condition: 'turnCount(2)' } });
    expect(two.messages.filter((m) => m.role === 'assistant')).toHaveLength(2);
    const answered = agentEnd(await run(toolCycle, [addTool], { stopWhen: turnCount(10) }));
    expect(answered.stopReason).toBe('stop');
    expect(answered.stoppedBy).toBeUndefined();
  });

  it('bad stop conditions fail the run before any event, naming the entry', async () => {
    await expect(run(toolCycle, [addTool], { stopWhen: [turnCount(1), 3 as never] })).rejects.toThrow('config.stopWhen[1]: expected a stop condition (a function), got the number 3');
  });
});

const search = defineTool({ name: 'search', description: 'Searches', parameters: z.object({ q: z.string() }), execute: ({ q }) => `results for ${q}` });

describe('prepareTurn in the loop', () => {
  it('is asked before each model call; its tools, system prompt and messages shape that call only', async () => {
    const asked: Array<Pick<PrepareTurnContext, 'turnIndex'> & { model: string }> = [];
    const cfg = config(toolCycle, {
      prepareTurn: (ctx) => {
        asked.push({ turnIndex: ctx.turnIndex, model: ctx.model.id });
        if (ctx.turnIndex === 0) return { activeTools: ['add'], systemPrompt: 'Add first.' };
        if (ctx.turnIndex === 1) return { messages: ctx.messages.slice(-1) }; // only the last tool result is sent
        return { toolChoice: 'none' };
      },
    });
    const all = await events(agentLoop([userMessage('hi', 0)], context([addTool, search]), cfg));
    expect(asked).toEqual([0, 1, 2].map((turnIndex) => ({ turnIndex, model: 'scripted-model' })));
    const [first, second, third] = cfg.provider.requests;
    expect(first!.tools.map((t) => t.name)).toEqual(['add']);
    expect(first!.systemPrompt).toBe('Add first.');
    expect(second!.tools.map((t) => t.name)).toEqual(['add', 'search']); // nothing carries over
    expect(second!.systemPrompt).toBe('You are a test.');
    expect(second!.messages.map((m) => m.role)).toEqual(['toolResult']);
    expect(third!.tools).toEqual([]);
    // The context itself is whole.
    expect(agentEnd(all).messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant', 'toolResult', 'assistant']);
  });

  it('tools brings tools of the turn\'s own: the model sees them and they run, that turn only', async () => {
    const cfg = config([{ toolCalls: [{ name: 'search', arguments: { q: 'rxjs' } }] }, { text: 'done' }], {
      prepareTurn: ({ turnIndex }) => (turnIndex === 0 ? { tools: [search] } : undefined),
    });
    const all = await events(agentLoop([userMessage('hi', 0)], context([addTool]), cfg));
    expect(cfg.provider.requests.map((r) => r.tools.map((t) => t.name))).toEqual([['search'], ['add']]);
    expect(textOf(agentEnd(all).messages.find((m) => m.role === 'toolResult') as never)).toBe('results for rxjs');
  });

  it('a tool left out of activeTools cannot run that turn: its call is answered "Tool not found"', async () => {
    const all = await run(toolCycle.slice(1), [addTool, search], { prepareTurn: () => ({ activeTools: ['search'] }) });
    const result = agentEnd(all).messages.find((m) => m.role === 'toolResult');
    expect(result).toMatchObject({ isError: true });
    expect(textOf(result as never)).toBe('Tool not found: add');
  });

  it('switches providers mid-run: the second turn goes to the other provider with the whole history, without the first\'s key', async () => {
    const primary = { ...scriptedModel('first-model'), apiKey: 'sk-first' };
    const otherModel = { ...scriptedModel('other-model'), provider: 'other' };
    const other = scriptedProvider([{ text: 'the sum is 3' }], { provider: 'other', model: 'other-model' });
    const cfg = config([toolCycle[0]!], {
      model: primary,
      prepareTurn: ({ turnIndex }) => (turnIndex === 1 ? { model: { model: otherModel, provider: other } } : undefined),
    });
    const all = await events(agentLoop([userMessage('hi', 0)], context([addTool]), cfg));
    expect(cfg.provider.requests).toHaveLength(1);
    expect(cfg.provider.requests[0]!.apiKey).toBe('sk-first');
    expect(other.requests).toHaveLength(1);
    const sent = other.requests[0]!;
    expect(sent.model.id).toBe('other-model');
    expect(sent.apiKey).toBeUndefined();
    expect(sent.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult']);
    const end = agentEnd(all);
    expect(end.stopReason).toBe('stop');
    expect(end.messages.filter((m): m is AssistantMessage => m.role === 'assistant').map((m) => m.provider)).toEqual(['scripted', 'other']);
  });

  it('an answer naming an unknown tool fails the run, naming it; one that throws is a HookError and the turn goes as built', async () => {
    await expect(run(toolCycle, [addTool], { prepareTurn: () => ({ activeTools: ['nope'] }) }))
      .rejects.toThrow('prepareTurn answered: activeTools[0]: no tool named "nope" (tools: add)');
    const all = await run([{ text: 'ok' }], [addTool], {
      prepareTurn: () => {
        throw new Error('no routing table');
      },
    });
    expect(all.find((e) => e.type === 'HookError')).toMatchObject({ hook: 'prepareTurn', message: 'no routing table' });
    // Tools an answer brings are checked as a run's are.
    await expect(run(toolCycle, [addTool], { prepareTurn: () => ({ tools: [{ ...search, execute: undefined as never }] }) }))
      .rejects.toThrow('prepareTurn answered: tools: tools[0] "search": execute must be a function');
    expect(agentEnd(all).stopReason).toBe('stop');
  });
});
