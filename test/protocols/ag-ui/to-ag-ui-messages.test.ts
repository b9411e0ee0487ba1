import { describe, expect, it } from 'vitest';
import { MessageSchema } from '@ag-ui/core/schemas';
import { extensionMessage, userMessage, type AgentMessage, type AssistantMessage, type ToolResultMessage } from '../../../src/index.js';
import { AgUiInputError, fromAgUiMessages, toAgUiMessages, type AgUiMessage } from '../../../src/protocols/ag-ui/index.js';

const usage = { input: 10, output: 5, reasoning: 2, cacheRead: 1, cacheWrite: 0, totalTokens: 16 };
const assistant = (content: AssistantMessage['content'], extra: Partial<AssistantMessage> = {}): AssistantMessage => ({
  role: 'assistant', content, stopReason: content.some((c) => c.type === 'toolCall') ? 'toolUse' : 'stop', model: 'm-1', provider: 'p', usage, timestamp: 2, ...extra,
});
const result = (toolCallId: string, text: string, extra: Partial<ToolResultMessage> = {}): ToolResultMessage => ({
  role: 'toolResult', toolCallId, toolName: 'weather', content: [{ type: 'text', text }], isError: false, timestamp: 3, ...extra,
});

/** A conversation with every kind of content phi-rx has. */
const conversation: AgentMessage[] = [
  userMessage('What is the weather in Paris and Rome?', 1),
  userMessage([{ type: 'text', text: 'And this picture?' }, { type: 'image', data: 'aGVsbG8=', mimeType: 'image/png' }], 1),
  assistant([
    { type: 'thinking', thinking: 'Two cities: two calls.', signature: 'sig-a' },
    { type: 'text', text: 'Checking both.' },
    { type: 'toolCall', id: 'c1', name: 'weather', arguments: { city: 'Paris' } },
    { type: 'toolCall', id: 'c2', name: 'weather', arguments: { city: 'Rome', units: { temp: 'C' } } },
  ]),
  result('c1', 'Sunny, 21 °C', { details: { source: 'api', code: 200 } }),
  result('c2', 'no station', { isError: true }),
  { ...assistant([{ type: 'text', text: 'Paris: sunny. ' }, { type: 'thinking', thinking: '', signature: 'opaque', redacted: true }, { type: 'text', text: 'Rome: unknown.' }]), turnId: { loopId: 'l', turnIndex: 1 } },
  assistant([{ type: 'text', text: '' }], { stopReason: 'error', errorMessage: 'overloaded' }),
  extensionMessage('ui.card', { title: 'Paris', temp: 21 }, 4),
];

describe('toAgUiMessages / fromAgUiMessages', () => {
  it('every converted message passes AG-UI\'s message schema', () => {
    for (const m of toAgUiMessages(conversation)) expect(MessageSchema.safeParse(m).success, JSON.stringify(m)).toBe(true);
  });

  it('phi-rx → AG-UI → phi-rx gives back equal messages: text, images, thinking with signatures, tool calls, results, errors, extension messages', () => {
    const agUi = toAgUiMessages(conversation);
    expect(fromAgUiMessages(JSON.parse(JSON.stringify(agUi)) as AgUiMessage[])).toEqual(conversation);
  });

  it('puts each thinking block in a reasoning message before its assistant message', () => {
    const agUi = toAgUiMessages(conversation.slice(2, 3), () => 'a1');
    expect(agUi.map((m) => [m.id, m.role])).toEqual([['a1.r0', 'reasoning'], ['a1', 'assistant']]);
    expect(agUi[0]).toMatchObject({ content: 'Two cities: two calls.', encryptedValue: 'sig-a' });
    expect(agUi[1]).toMatchObject({ content: 'Checking both.', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }, { id: 'c2' }] });
  });

  it('AG-UI → phi-rx → AG-UI keeps every message a client wrote (ids aside)', () => {
    const client: AgUiMessage[] = [
      { id: 'u1', role: 'user', content: 'Hi' },
      { id: 'u2', role: 'user', content: [{ type: 'text', text: 'See' }, { type: 'image', source: { type: 'data', value: 'AAAA', mimeType: 'image/jpeg' } }] },
      { id: 'r1', role: 'reasoning', content: 'hmm' },
      { id: 'a1', role: 'assistant', content: 'Calling.', toolCalls: [{ id: 't1', type: 'function', function: { name: 'search', arguments: '{"q":"x"}' } }] },
      { id: 'tool1', role: 'tool', toolCallId: 't1', content: 'found' },
    ];
    const back = toAgUiMessages(fromAgUiMessages(client, { now: () => 0 }));
    const strip = (ms: AgUiMessage[]) => ms.map(({ id: _id, metadata: _m, ...m }) => m);
    expect(strip(back)).toEqual(strip(client));
  });

  it('a tool message names its call\'s tool and an `error` makes it an error result', () => {
    const messages = fromAgUiMessages([
      { id: 'a1', role: 'assistant', toolCalls: [{ id: 't1', type: 'function', function: { name: 'search', arguments: '' } }] },
      { id: 'x', role: 'tool', toolCallId: 't1', content: '', error: 'timed out' },
    ], { now: () => 0 });
    expect(messages[1]).toMatchObject({ role: 'toolResult', toolName: 'search', isError: true, content: [{ type: 'text', text: '' }] });
  });

  it('system and developer messages stay in place as extension messages and convert back', () => {
    const client: AgUiMessage[] = [{ id: 's', role: 'system', content: 'Be brief.' }, { id: 'u', role: 'user', content: 'Hi' }];
    const messages = fromAgUiMessages(client, { now: () => 0 });
    expect(messages[0]).toEqual({ role: 'extension', kind: 'ag-ui.system', data: { content: 'Be brief.' } });
    expect(toAgUiMessages(messages)[0]).toMatchObject({ role: 'system', content: 'Be brief.' });
  });

  it('content phi-rx cannot hold is an AgUiInputError naming where it is', () => {
    const byUrl: AgUiMessage[] = [{ id: 'u', role: 'user', content: [{ type: 'image', source: { type: 'url', value: 'https://x/y.png' } }] }];
    expect(() => fromAgUiMessages(byUrl)).toThrow(AgUiInputError);
    expect(() => fromAgUiMessages(byUrl)).toThrow('messages[0].content[0]: an image by url is not supported');
    const badArgs: AgUiMessage[] = [{ id: 'a', role: 'assistant', toolCalls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '[1]' } }] }];
    expect(() => fromAgUiMessages(badArgs)).toThrow('messages[0].toolCalls[0].function.arguments: tool arguments must be a JSON object');
  });
});
