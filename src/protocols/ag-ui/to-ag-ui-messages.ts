import type { AssistantMessage, AgentMessage, ExtensionMessage, ToolResultMessage, UserMessage, TurnId } from '../../types/message.js';
import type { ImageContent, TextContent } from '../../types/content.js';
import { PHI_RX_METADATA, type AgUiContentPart, type AgUiMessage, type AgUiMetadata, type AgUiToolCall } from './ag-ui-event.js';

/** The extension kinds that hold an AG-UI system or developer message (see {@link fromAgUiMessages}). */
export const AG_UI_SYSTEM_KIND = 'ag-ui.system';
export const AG_UI_DEVELOPER_KIND = 'ag-ui.developer';

/**
 * phi-rx messages as AG-UI messages, losing nothing: {@link fromAgUiMessages} gives back equal
 * messages. Text and images become the content (a lone text block as a string, else parts);
 * each thinking block a `reasoning` message before its assistant message (the signature as its
 * `encryptedValue`); tool calls `toolCalls` with JSON arguments; tool results `tool` messages;
 * extension messages `activity` messages (`activityType` the kind, `content.data` the data). What
 * AG-UI has no field for (timestamps, model, usage, stop reason, a result's `isError` and
 * `details`, the order of an assistant's blocks) goes in `metadata['phi-rx']`.
 *
 * @param id The AG-UI id of the message at `index` (default `m{index}`); a reasoning message
 * takes its assistant's id with `.r{n}` appended.
 * @example
 * toAgUiMessages([userMessage('hi', 0)]); // [{ id: 'm0', role: 'user', content: 'hi', metadata: { 'phi-rx': { timestamp: 0 } } }]
 */
export function toAgUiMessages(messages: readonly AgentMessage[], id: (message: AgentMessage, index: number) => string = (_m, i) => `m${i}`): AgUiMessage[] {
  const out: AgUiMessage[] = [];
  messages.forEach((message, index) => {
    const messageId = id(message, index);
    switch (message.role) {
      case 'user':
        out.push({ id: messageId, role: 'user', content: contentOf(message.content), metadata: meta(userMeta(message)) });
        break;
      case 'assistant':
        out.push(...assistantMessages(message, messageId));
        break;
      case 'toolResult':
        out.push({ id: messageId, role: 'tool', toolCallId: message.toolCallId, content: contentOf(message.content), metadata: meta(toolMeta(message)) });
        break;
      case 'extension':
        out.push(extensionMessage(message, messageId));
        break;
    }
  });
  return out;
}

/** A user or tool message's content: a lone text block as a string, else parts. */
export function contentOf(content: ReadonlyArray<TextContent | ImageContent>): string | AgUiContentPart[] {
  if (content.length === 1 && content[0]!.type === 'text') return content[0]!.text;
  return content.map((c): AgUiContentPart => (c.type === 'text' ? { type: 'text', text: c.text } : { type: 'image', source: { type: 'data', value: c.data, mimeType: c.mimeType } }));
}

/** An assistant message's reasoning messages (one per thinking block) and itself. */
function assistantMessages(message: AssistantMessage & { turnId?: TurnId }, messageId: string): AgUiMessage[] {
  const out: AgUiMessage[] = [];
  const toolCalls: AgUiToolCall[] = [];
  const blocks: string[] = [];
  let text = '';
  let texts = 0;
  for (const block of message.content) {
    if (block.type === 'text') {
      text += block.text;
      texts++;
      blocks.push(`t${block.text.length}`);
    } else if (block.type === 'thinking') {
      out.push(reasoningMessage(block, `${messageId}.r${out.length}`));
      blocks.push('r');
    } else {
      toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.arguments) } });
      blocks.push('c');
    }
  }
  const { role: _r, content: _c, turnId, ...fields } = message;
  const assistant: AgUiMessage = { id: messageId, role: 'assistant', metadata: meta({ ...fields, ...(turnId && { turnId }), blocks }) };
  if (texts > 0) assistant.content = text;
  if (toolCalls.length > 0) assistant.toolCalls = toolCalls;
  out.push(assistant);
  return out;
}

function reasoningMessage(block: { thinking: string; signature?: string; redacted?: boolean }, id: string): AgUiMessage {
  const message: AgUiMessage = { id, role: 'reasoning', content: block.thinking };
  if (block.signature !== undefined) message.encryptedValue = block.signature;
  if (block.redacted !== undefined) message.metadata = meta({ redacted: block.redacted });
  return message;
}

function extensionMessage(message: ExtensionMessage, id: string): AgUiMessage {
  const data = message.data as { content?: unknown } | undefined;
  if ((message.kind === AG_UI_SYSTEM_KIND || message.kind === AG_UI_DEVELOPER_KIND) && typeof data?.content === 'string') {
    return { id, role: message.kind === AG_UI_SYSTEM_KIND ? 'system' : 'developer', content: data.content, metadata: meta(message.timestamp === undefined ? {} : { timestamp: message.timestamp }) };
  }
  const fields = message.timestamp === undefined ? {} : { timestamp: message.timestamp };
  return { id, role: 'activity', activityType: message.kind, content: { data: message.data }, metadata: meta(fields) };
}

function userMeta(message: UserMessage & { turnId?: TurnId }): Record<string, unknown> {
  return message.turnId ? { timestamp: message.timestamp, turnId: message.turnId } : { timestamp: message.timestamp };
}

function toolMeta(message: ToolResultMessage & { turnId?: TurnId }): Record<string, unknown> {
  const { role: _r, content: _c, toolCallId: _id, ...fields } = message;
  return fields;
}

function meta(fields: Record<string, unknown>): AgUiMetadata {
  return { [PHI_RX_METADATA]: fields };
}
