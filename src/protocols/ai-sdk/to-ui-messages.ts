import type { AgentMessage, AssistantMessage, ToolResultMessage } from '../../types/message.js';
import type { UserContent } from '../../types/content.js';
import type { UIMessage, UIMessagePart, UIToolPart } from './ui-message.js';

/** Options of {@link toUIMessages}. */
export interface ToUIMessagesOptions {
  /** The id of the i-th UI message made (default `msg-<i>`); give the streamed message's id to the answer so the page keeps it. */
  id?: (message: UIMessage, index: number) => string;
  /** Tool parts as `dynamic-tool` (default false: `tool-<name>`). */
  dynamicTools?: boolean;
}

/**
 * A phi-rx conversation as `useChat` messages, for persistence (`useChat({ messages })` on the
 * next load): a user message per user message (text, images as data URLs); the assistant messages
 * and tool results between two user messages as one assistant message, a `step-start` before each
 * turn, its reasoning (with the signature in `providerMetadata.phi`), text and tool parts in their
 * final state (`output-available` with the phi-rx result `{ content, details? }`, `output-error`
 * with the error's text). Extension messages become `data-phi-extension` parts. Read back by
 * `fromUIMessages` to the same conversation (timestamps, usage and model aside).
 */
export function toUIMessages(messages: readonly AgentMessage[], options: ToUIMessagesOptions = {}): UIMessage[] {
  const out: UIMessage[] = [];
  let answer: UIMessage | undefined;
  const calls = new Map<string, UIToolPart>();
  const push = (message: UIMessage) => {
    message.id = options.id ? options.id(message, out.length) : `msg-${out.length}`;
    out.push(message);
    return message;
  };
  const answering = (): UIMessage => (answer ??= push({ id: '', role: 'assistant', parts: [] }));
  for (const message of messages) {
    if (message.role === 'user') {
      answer = undefined;
      push({ id: '', role: 'user', parts: message.content.map(userPart) });
    } else if (message.role === 'assistant') answering().parts.push({ type: 'step-start' }, ...assistantParts(message, calls, options));
    else if (message.role === 'toolResult') settle(calls.get(message.toolCallId), message);
    else answering().parts.push({ type: 'data-phi-extension', data: { kind: message.kind, data: message.data } });
  }
  return out;
}

function userPart(c: UserContent): UIMessagePart {
  return c.type === 'text' ? { type: 'text', text: c.text } : { type: 'file', mediaType: c.mimeType, url: `data:${c.mimeType};base64,${c.data}` };
}

function assistantParts(message: AssistantMessage, calls: Map<string, UIToolPart>, options: ToUIMessagesOptions): UIMessagePart[] {
  const parts: UIMessagePart[] = [];
  for (const c of message.content) {
    if (c.type === 'text') parts.push({ type: 'text', text: c.text, state: 'done' });
    else if (c.type === 'thinking') {
      const part: UIMessagePart = { type: 'reasoning', text: c.thinking, state: 'done' };
      if (c.signature !== undefined || c.redacted) part.providerMetadata = { phi: { signature: c.signature ?? null, redacted: c.redacted === true } };
      parts.push(part);
    } else if (c.type === 'toolCall') {
      const part: UIToolPart = options.dynamicTools
        ? { type: 'dynamic-tool', toolName: c.name, toolCallId: c.id, state: 'input-available', input: c.arguments }
        : { type: `tool-${c.name}`, toolCallId: c.id, state: 'input-available', input: c.arguments };
      calls.set(c.id, part);
      parts.push(part);
    }
  }
  return parts;
}

function settle(part: UIToolPart | undefined, result: ToolResultMessage): void {
  if (!part) return;
  if (result.isError) {
    part.state = 'output-error';
    part.errorText = result.content.map((c) => (c.type === 'text' ? c.text : `[${c.mimeType} image]`)).join('\n');
  } else {
    part.state = 'output-available';
    part.output = result.details === undefined ? { content: result.content } : { content: result.content, details: result.details };
  }
}
