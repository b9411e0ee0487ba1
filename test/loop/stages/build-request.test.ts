import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { from, lastValueFrom, map, toArray } from 'rxjs';
import { buildRequest, isLoopState, loopState, withRecords, type LoopState } from '../../../src/index.js';
import { DEFAULT_CACHE_CONFIG } from '../../../src/types/config.js';
import { emptyAssistant, toLlmMessages, userMessage, type AgentMessage, type LlmMessage } from '../../../src/types/message.js';

const scheduler = (): TestScheduler => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const model = { id: 'm', api: 'openai-completions', provider: 'p', apiKey: 'model-key' } as const;
const tagged = (m: AgentMessage, turnIndex: number): AgentMessage => ({ ...m, turnId: { loopId: 'L', turnIndex } }) as LlmMessage;
const history = [tagged(userMessage('hi', 0), 0), tagged({ ...emptyAssistant('m', 'p', 1), content: [{ type: 'text', text: 'hello' }] }, 0)];
const request = { model, systemPrompt: 'sys', tools: [], thinkingLevel: 'off', cacheConfig: DEFAULT_CACHE_CONFIG };

describe('buildRequest with transforms', () => {
  it('runs asyncTransformContext, transformContext and the context operator in order, then getApiKey; empties sinceRequest', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const s: LoopState = { ...loopState('L', history), sinceRequest: [history[0]!] };
      const note = userMessage('[retrieved: docs]', 2);
      const stage = buildRequest({
        model, systemPrompt: 'sys',
        asyncTransformContext: (messages) => cold('--(m|)', { m: [...messages, note] }),
        transformContext: (messages) => messages.slice(1),
        context: map((messages) => messages.filter((m) => m.role !== 'assistant')),
        getApiKey: () => cold('-(k|)', { k: 'rotated' }),
      });
      expectObservable(cold('s|', { s }).pipe(stage)).toBe('---(r|)', {
        r: { ...s, sinceRequest: [], request: { ...request, messages: [note], apiKey: 'rotated' } },
      });
    });
  });

  it('a transform or key lookup that fails is a HookError, and the request goes out with the context and key as they were', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const s = loopState('L', history);
      const stage = buildRequest({
        model, systemPrompt: 'sys', apiKey: 'model-key',
        transformContext: () => {
          throw new Error('transform bug');
        },
        getApiKey: () => cold('-#', {}, new Error('vault down')),
      });
      expectObservable(cold('s-----|', { s }).pipe(stage)).toBe('-(abr)|', {
        a: { type: 'HookError', loopId: 'L', hook: 'transformContext', message: 'transform bug', timestamp: 0 },
        b: { type: 'HookError', loopId: 'L', hook: 'getApiKey', message: 'vault down', timestamp: 1 },
        r: { ...s, request: { ...request, messages: toLlmMessages(history), apiKey: 'model-key' } },
      });
    });
  });

  it('converts each message for the model once: the next turn reuses the conversion of the messages it shares', async () => {
    const s = loopState('L', history);
    const next = withRecords(s, [tagged(userMessage('more', 3), 1)]);
    const sent = await lastValueFrom(
      from([s, next]).pipe(buildRequest({ model, systemPrompt: 'sys' }), map((o) => (isLoopState(o) ? o.request!.messages : [])), toArray()),
    );
    expect(sent[0]).toEqual(toLlmMessages(history));
    expect(sent[1]).toEqual(toLlmMessages(next.messages));
    expect(sent[1]![0]).toBe(sent[0]![0]); // the same converted object, not converted again
    expect(sent[1]![1]).toBe(sent[0]![1]);
  });
});

describe('buildRequest over interleaved runs', () => {
  it('one stage serves several runs: each request carries its run\'s session, and each run keeps its own conversion', async () => {
    const runA = { agentId: 'A', sessionId: 'SA', firstTrigger: 'user' as const };
    const runB = { agentId: 'B', sessionId: 'SB', firstTrigger: 'user' as const };
    const a1 = loopState('LA', history, [], runA);
    const b1 = loopState('LB', [userMessage('other', 5)], [], runB);
    const a2 = withRecords(a1, [tagged(userMessage('more', 3), 1)]);
    const requests = await lastValueFrom(
      from([a1, b1, a2]).pipe(buildRequest({ model, systemPrompt: 'sys' }), map((o) => (isLoopState(o) ? o.request! : undefined)), toArray()),
    );
    expect(requests.map((r) => r!.sessionId)).toEqual(['SA', 'SB', 'SA']);
    expect(requests[1]!.messages).toEqual(toLlmMessages(b1.messages));
    expect(requests[2]!.messages).toEqual(toLlmMessages(a2.messages));
    // Run A's second turn reuses run A's conversion, though run B's turn came between.
    expect(requests[2]!.messages[0]).toBe(requests[0]!.messages[0]);
    // A session id in the options is every run's.
    const fixed = await lastValueFrom(from([a1, b1]).pipe(buildRequest({ model, systemPrompt: 'sys', sessionId: 'mine' }), map((o) => (isLoopState(o) ? o.request!.sessionId : '')), toArray()));
    expect(fixed).toEqual(['mine', 'mine']);
  });

  it('hands asyncTransformContext the run\'s signal when its options name none', async () => {
    const controller = new AbortController();
    const seen: Array<AbortSignal | undefined> = [];
    const stage = buildRequest({ model, systemPrompt: 'sys', asyncTransformContext: (m, signal) => (seen.push(signal), m) });
    const s = loopState('L', history, [], { agentId: 'A', sessionId: 'S', firstTrigger: 'user', signal: controller.signal });
    await lastValueFrom(from([s, loopState('L2', history)]).pipe(stage, toArray()));
    expect(seen).toEqual([controller.signal, undefined]);
  });
});

describe('buildRequest tool definitions', () => {
  it('describes a tool once for every request, and anew when its fields change', async () => {
    const tool = { name: 'look', label: 'look', description: 'looks', parameters: { type: 'object' }, execute: () => 'ok' };
    const requestOf = async (): Promise<NonNullable<LoopState['request']>> => {
      const out = await lastValueFrom(from([loopState('L', history)]).pipe(buildRequest({ model, systemPrompt: 'sys', tools: [tool] }), toArray()));
      return (out.filter(isLoopState).at(-1) as LoopState).request!;
    };
    const first = await requestOf();
    const second = await requestOf();
    expect(second.tools[0]).toBe(first.tools[0]);
    tool.description = 'looks harder';
    const third = await requestOf();
    expect(third.tools[0]).toEqual({ name: 'look', description: 'looks harder', parameters: { type: 'object' } });
  });
});
