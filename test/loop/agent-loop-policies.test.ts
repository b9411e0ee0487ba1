import { describe, expect, it } from 'vitest';
import { filter, map, tap } from 'rxjs';
import {
  agentLoop, extensionMessage, ProviderError, textOf, userMessage, type AgentEvent, type AssistantMessage, type PreTurnContext,
} from '../../src/index.js';
import { addTool, agentEnd, config, context, events, run } from '../agent/helpers.js';

const toolCycle = [{ text: 'adding', toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: 'three' }];

describe('swink policies (spec 002)', () => {
  it('pre-turn policies see only the messages added since the previous call', async () => {
    const seen: string[][] = [];
    const preTurn = [(ctx: PreTurnContext) => void seen.push(ctx.newMessages.map((m) => m.role))];
    await run(toolCycle, [addTool], { policies: { preTurn } });
    expect(seen).toEqual([['user'], ['assistant', 'toolResult']]);
  });

  it('pre-turn Stop ends the run before the model call; Inject adds messages the model sees', async () => {
    const stopped = await run(toolCycle, [addTool], { policies: { preTurn: [() => ({ action: 'stop', reason: 'budget exhausted' })] } });
    expect(agentEnd(stopped)).toMatchObject({ stopReason: 'guardRail' });
    expect(stopped.filter((e) => e.type === 'TurnEnd')).toHaveLength(1);

    const cfg = config([{ text: 'ok' }], {
      policies: { preTurn: [(ctx) => (ctx.turnIndex === 0 ? { action: 'inject', messages: [userMessage('remember: be brief', 0)] } : undefined)] },
    });
    await events(agentLoop([userMessage('hi', 0)], context([]), cfg));
    expect(cfg.provider.requests[0]!.messages.map((m) => textOf(m as never))).toEqual(['hi', 'remember: be brief']);
  });

  it('pre-dispatch policies: rewrite arguments, skip, stop, inject', async () => {
    const rewritten = await run(toolCycle, [addTool], { policies: { preDispatch: [(call) => ({ action: 'continue', arguments: { ...call.arguments, b: 40 } })] } });
    expect(textOf(agentEnd(rewritten).messages.find((m) => m.role === 'toolResult') as never)).toBe('41');

    const skipped = await run(toolCycle, [addTool], { policies: { preDispatch: [() => ({ action: 'skip', reason: 'not allowed here' })] } });
    expect(textOf(agentEnd(skipped).messages.find((m) => m.role === 'toolResult') as never)).toBe('not allowed here');

    const stopped = await run(toolCycle, [addTool], { policies: { preDispatch: [() => ({ action: 'stop', reason: 'dangerous' })] } });
    expect(stopped.filter((e) => e.type === 'TurnEnd')).toHaveLength(1); // TurnEnd still emitted, no second turn
    expect(agentEnd(stopped).messages.at(-1)).toMatchObject({ role: 'toolResult', isError: true });

    const cfg = config(toolCycle, { policies: { preDispatch: [() => ({ action: 'inject', messages: [userMessage('note for next turn', 0)] })] } });
    await events(agentLoop([userMessage('hi', 0)], context([addTool]), cfg));
    expect(textOf(cfg.provider.requests[1]!.messages.at(-1) as never)).toBe('note for next turn');
  });

  it('post-turn Inject replaces the assistant message before TurnEnd but cannot add or drop tool calls', async () => {
    const censor = (m: AssistantMessage): AssistantMessage => ({ ...m, content: m.content.map((c) => (c.type === 'text' ? { ...c, text: '[redacted]' } : c)) });
    const ok = await run(toolCycle, [addTool], { policies: { postTurn: [(ctx) => ({ action: 'inject', message: censor(ctx.message) })] } });
    const turnEnds = ok.filter((e): e is Extract<AgentEvent, { type: 'TurnEnd' }> => e.type === 'TurnEnd');
    expect(textOf(turnEnds[0]!.message as AssistantMessage)).toBe('[redacted]');
    expect(agentEnd(ok).messages.filter((m) => m.role === 'assistant').map((m) => textOf(m as never))).toEqual(['[redacted]', '[redacted]']);

    const dropCalls = await run(toolCycle, [addTool], {
      policies: { postTurn: [(ctx) => ({ action: 'inject', message: { ...ctx.message, content: [{ type: 'text', text: 'no tools' }] } })] },
    });
    expect(dropCalls.find((e) => e.type === 'HookError')).toMatchObject({ hook: 'postTurn' });
    expect(textOf(agentEnd(dropCalls).messages[1] as never)).toBe('adding');
  });

  it('post-turn Stop still emits TurnEnd and skips follow-ups', async () => {
    const { MessageQueue } = await import('../../src/index.js');
    const followUp = new MessageQueue();
    followUp.push(userMessage('later', 0));
    const all = await run([{ text: 'done' }, { text: 'never' }], [], { followUp, policies: { postTurn: [() => ({ action: 'stop', reason: 'enough' })] } });
    expect(all.filter((e) => e.type === 'TurnEnd')).toHaveLength(1);
    expect(followUp.size).toBe(1);
  });

  it('post-turn policies are asked after every turn, one that ended in error included (retry: false, an auth error)', async () => {
    const seen: string[] = [];
    const all = await run([{ text: 'adding', toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { error: ProviderError.auth('401 invalid key') }], [addTool], {
      retry: false,
      policies: { postTurn: [({ message, turnIndex }) => void seen.push(`${turnIndex}:${message.stopReason}`)] },
    });
    expect(seen).toEqual(['0:toolUse', '1:error']);
    expect(agentEnd(all).stopReason).toBe('error');
  });

  it('post-loop Inject starts another turn', async () => {
    let asked = 0;
    const all = await run([{ text: 'draft' }, { text: 'final' }], [], {
      policies: { postLoop: [() => (asked++ === 0 ? { action: 'inject', messages: [userMessage('double-check', 0)] } : undefined)] },
    });
    expect(agentEnd(all).messages.map((m) => (m.role === 'user' || m.role === 'assistant' ? textOf(m as never) : m.role))).toEqual(['hi', 'draft', 'double-check', 'final']);
  });

  it('a policy that throws is reported and treated as continue', async () => {
    const all = await run(toolCycle, [addTool], {
      policies: {
        preTurn: [() => { throw new Error('policy bug'); }],
        preDispatch: [() => Promise.reject(new Error('dispatch bug'))],
      },
    });
    expect(all.filter((e) => e.type === 'HookError').map((e) => (e as { hook: string }).hook)).toEqual(['preTurn', 'preDispatch', 'preTurn']);
    expect(agentEnd(all).stopReason).toBe('stop');
  });
});

describe('context transforms, convertToLlm, API keys', () => {
  it('runs the async transform, then the sync one, before each call; extension messages never reach the model', async () => {
    const order: string[] = [];
    const cfg = config([{ text: 'ok' }], {
      asyncTransformContext: async (m) => (order.push('async'), [...m, userMessage('retrieved fact', 0)]),
      transformContext: (m) => (order.push('sync'), m.filter((x) => x.role !== 'user' || textOf(x as never) !== 'drop me')),
    });
    const history = [userMessage('drop me', 0), extensionMessage('ui', { banner: true }, 0)];
    await events(agentLoop([userMessage('hi', 0)], context([], history), cfg));
    expect(order).toEqual(['async', 'sync']);
    expect(cfg.provider.requests[0]!.messages.map((m) => textOf(m as never))).toEqual(['hi', 'retrieved fact']);
    expect(cfg.provider.requests[0]!.messages.some((m) => (m.role as string) === 'extension')).toBe(false);
  });

  it('uses a custom convertToLlm and a per-call API key resolver', async () => {
    let n = 0;
    const cfg = config(toolCycle, {
      convertToLlm: (ms) => ms.filter((m) => m.role !== 'extension').map((m) => ({ ...(m as object), timestamp: 1 }) as never),
      getApiKey: async () => `key-${++n}`,
    });
    await events(agentLoop([userMessage('hi', 0)], context([addTool]), cfg));
    expect(cfg.provider.requests.map((r) => r.apiKey)).toEqual(['key-1', 'key-2']);
    expect(cfg.provider.requests[0]!.messages.every((m) => m.timestamp === 1)).toBe(true);
  });
});

describe('composition: your operators at the pipeline stages', () => {
  it('applies context, providerStream, toolCalls, toolResults and events stages', async () => {
    const seen = { context: 0, stream: 0 };
    const cfg = config(toolCycle, {
      operators: {
        context: tap(() => seen.context++),
        providerStream: tap(() => seen.stream++),
        toolCalls: map((call) => ({ ...call, arguments: { a: 10, b: 10 } })),
        toolResults: map((r) => ({ ...r, content: [{ type: 'text' as const, text: textOf(r).replace('20', '<redacted>') }] })),
        events: filter((e) => e.type !== 'MessageUpdate'),
      },
    });
    const all = await events(agentLoop([userMessage('hi', 0)], context([addTool]), cfg));
    expect(seen.context).toBe(2);
    expect(seen.stream).toBeGreaterThan(4);
    expect(all.some((e) => e.type === 'MessageUpdate')).toBe(false);
    expect(all.find((e) => e.type === 'ToolExecutionEnd')).toMatchObject({ result: { content: [{ text: '<redacted>' }] } });
    expect(textOf(cfg.provider.requests[1]!.messages.at(-1) as never)).toBe('<redacted>');
  });

  it('a toolCalls stage that drops a call still leaves the model an answer for it', async () => {
    const all = await run(toolCycle, [addTool], { operators: { toolCalls: filter(() => false) } });
    expect(agentEnd(all).messages.find((m) => m.role === 'toolResult')).toMatchObject({ isError: true });
  });
});
