import { describe, expect, it } from 'vitest';
import { AgentError, BasicAgent } from '../../src/index.js';
import { scriptedModel, scriptedProvider } from '../../src/testing/index.js';

const hi = { role: 'user', content: [{ type: 'text', text: 'hi' }], timestamp: 1 };
const call = { role: 'assistant', content: [{ type: 'text', text: 'calling' }, { type: 'toolCall', id: 'c1', name: 'bash', arguments: {} }], stopReason: 'toolUse', timestamp: 2 };
const result = { role: 'toolResult', toolCallId: 'c1', toolName: 'bash', content: [{ type: 'text', text: 'ok' }], isError: false, timestamp: 3 };

/** The error restoreMessages throws for `messages`, and proof that the conversation was kept. */
function restoreError(messages: unknown[]): string {
  const agent = new BasicAgent({ model: scriptedModel(), provider: scriptedProvider([]) });
  agent.restoreMessages(JSON.stringify([hi]));
  const before = agent.messages;
  let error: unknown;
  try {
    agent.restoreMessages(JSON.stringify(messages));
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(AgentError);
  expect(error).toMatchObject({ code: 'InvalidJson' });
  expect(agent.messages).toBe(before);
  return (error as Error).message;
}

describe('BasicAgent.restoreMessages errors name the path down to the content block and field', () => {
  it.each([
    ['an image block with numeric data', [hi, call, result, { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'image', data: 5, mimeType: 'image/png' }] }], /^messages\[3\]\.content\[1\]\.data: Invalid input: expected string, received number$/],
    ['an image block without a mime type', [hi, { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'image', data: 'AAAA' }] }], /^messages\[1\]\.content\[1\]\.mimeType: image content needs mimeType$/],
    ['an unknown content block type', [hi, { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'video' }] }], /^messages\[1\]\.content\[1\]\.type: Invalid input: expected one of "text"\|"image"$/],
    ['a text block whose text is a number', [hi, call, { ...result, content: [{ type: 'text', text: 'a' }, { type: 'text', text: 7 }] }], /^messages\[2\]\.content\[1\]\.text: Invalid input: expected string, received number$/],
    ['a tool call with a numeric id', [hi, { ...call, content: [{ type: 'text', text: 'a' }, { type: 'toolCall', id: 5, name: 'bash', arguments: {} }] }], /^messages\[1\]\.content\[1\]\.id: Invalid input: expected string, received number$/],
    ['a tool result without toolCallId', [hi, call, { ...result, toolCallId: undefined }], /^messages\[2\]\.toolCallId: toolResult needs toolCallId$/],
    ['user content that is neither text nor blocks', [hi, { role: 'user', content: 5 }], /^messages\[1\]\.content: Invalid input: expected string or array$/],
    ['an unknown role', [hi, { role: 'robot', content: [] }], /^messages\[1\]\.role: /],
    ['a null message', [hi, null], /^messages\[1\]: /],
    ['bad usage', [hi, { ...call, usage: { input: 'x' } }], /^messages\[1\]\.usage\.input: /],
  ])('%s', (_, messages, expected) => {
    expect(restoreError(messages)).toMatch(expected);
  });
});
