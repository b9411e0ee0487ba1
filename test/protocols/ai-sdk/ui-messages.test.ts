import { describe, expect, it } from 'vitest';
import { lastValueFrom } from 'rxjs';
import { validateUIMessages, type UIMessage as AiUIMessage } from 'ai';
import { BasicAgent, type AgentEvent } from '../../../src/index.js';
import { scriptedProvider } from '../../../src/testing/index.js';
import { fromUIMessages, toUIMessages, type UIMessage } from '../../../src/protocols/ai-sdk/index.js';
import { model } from '../../agent/helpers.js';
import { add } from './chat-server.js';

const PNG = 'iVBORw0KGgo=';

describe('UIMessage[] <-> phi-rx messages', () => {
  it('a finished run\'s messages become UI messages the ai package validates, and read back to the same conversation', async () => {
    const agent = new BasicAgent({ model, retry: false, tools: [add], provider: scriptedProvider([
      { thinking: { text: 'adding', signature: 's1' }, text: 'Let me add.', toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 }, id: 'c1' }] },
      { text: 'It is 3.' },
    ]) });
    const end = await lastValueFrom(agent.prompt([{ role: 'user', content: [{ type: 'text', text: '1+2?' }, { type: 'image', data: PNG, mimeType: 'image/png' }], timestamp: 1 }]));
    expect(end.type).toBe('AgentEnd');
    const conversation = (end as Extract<AgentEvent, { type: 'AgentEnd' }>).messages;
    const ui = toUIMessages(conversation);
    await expect(validateUIMessages({ messages: ui as AiUIMessage[] })).resolves.toBeDefined();
    expect(ui.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(ui[1]!.parts).toMatchObject([
      { type: 'step-start' },
      { type: 'reasoning', text: 'adding', providerMetadata: { phi: { signature: 's1' } } },
      { type: 'text', text: 'Let me add.' },
      { type: 'tool-add', toolCallId: 'c1', state: 'output-available', input: { a: 1, b: 2 }, output: { content: [{ type: 'text', text: '3' }] } },
      { type: 'step-start' },
      { type: 'text', text: 'It is 3.' },
    ]);
    const back = fromUIMessages(ui, { now: 5 });
    const shape = (ms: readonly { role: string }[]) => ms.map((m) => ('content' in m ? { role: m.role, content: m.content } : m));
    const strip = (ms: typeof conversation) => ms.map(({ role, ...m }) => ({ role, content: (m as { content: unknown }).content }));
    expect(shape(back)).toEqual(strip(conversation));
  });

  it('request side: tool parts by state (open calls stay open, denied and failed become error results), files, data parts skipped', () => {
    const messages: UIMessage[] = [
      { id: 'u', role: 'user', parts: [{ type: 'text', text: 'look' }, { type: 'file', mediaType: 'image/png', url: `data:image/png;base64,${PNG}` }, { type: 'file', mediaType: 'text/plain', url: 'data:text/plain;base64,aGk=' }] },
      { id: 'a', role: 'assistant', parts: [
        { type: 'step-start' },
        { type: 'data-phi-agent-start', data: {} },
        { type: 'tool-deploy', toolCallId: 'd1', state: 'output-denied', input: { env: 'prod' }, approval: { id: 'd1', approved: false, reason: 'no' } },
        { type: 'dynamic-tool', toolName: 'fetch', toolCallId: 'f1', state: 'output-error', input: {}, errorText: 'offline' },
        { type: 'tool-deploy', toolCallId: 'd2', state: 'approval-responded', input: { env: 'dev' }, approval: { id: 'd2', approved: true } },
      ] },
    ];
    const out = fromUIMessages(messages, { now: 7 });
    expect(out).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', data: PNG, mimeType: 'image/png' }, { type: 'text', text: 'hi' }], timestamp: 7 },
      expect.objectContaining({ role: 'assistant', stopReason: 'toolUse', content: [
        { type: 'toolCall', id: 'd1', name: 'deploy', arguments: { env: 'prod' } },
        { type: 'toolCall', id: 'f1', name: 'fetch', arguments: {} },
        { type: 'toolCall', id: 'd2', name: 'deploy', arguments: { env: 'dev' } },
      ] }),
      { role: 'toolResult', toolCallId: 'd1', toolName: 'deploy', content: [{ type: 'text', text: 'Tool call denied: no' }], isError: true, timestamp: 7 },
      { role: 'toolResult', toolCallId: 'f1', toolName: 'fetch', content: [{ type: 'text', text: 'offline' }], isError: true, timestamp: 7 },
    ]);
  });

  it('says what it cannot take, and where', () => {
    expect(() => fromUIMessages([{ id: 'u', role: 'user', parts: [{ type: 'file', mediaType: 'application/pdf', url: 'data:application/pdf;base64,JVBE' }] }])).toThrow('fromUIMessages: messages[0].parts[0] is a application/pdf file; phi-rx messages take images and text files');
    expect(() => fromUIMessages([{ id: 'a', role: 'assistant', parts: [{ type: 'tool-x', toolCallId: 'c', state: 'input-available', input: [1] }] }])).toThrow('fromUIMessages: messages[0].parts[0] (tool-x): input must be an object, got an array');
    expect(() => fromUIMessages([{ id: 'u', role: 'user', parts: [{ type: 'text', text: 3 }] } as never])).toThrow('fromUIMessages: messages[0].parts[0].text must be a string, got number');
  });
});
