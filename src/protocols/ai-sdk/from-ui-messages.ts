import type { AgentMessage, AssistantMessage, ToolResultMessage, UserMessage } from '../../types/message.js';
import type { AssistantContent, ToolResultContent, UserContent } from '../../types/content.js';
import { Usage } from '../../types/usage.js';
import { isUIToolPart, uiToolName, type UIMessage, type UIMessagePart, type UIToolPart } from './ui-message.js';

/** Options of {@link fromUIMessages}. */
export interface FromUIMessagesOptions {
  /** Timestamp of the messages made (default `Date.now()`). */
  now?: number;
  /** `provider` / `model` of the assistant messages made (default `'ai-sdk'` / `'unknown'`): providers re-send thinking signatures only to the provider that made them. */
  provider?: string;
  model?: string;
}

/**
 * The phi-rx conversation of a `useChat` request's `messages`: user text and files (images and
 * `text/*` as data URLs), and each assistant message split at its `step-start` parts into one
 * assistant message per model turn (reasoning with its `phi` signature, text, tool calls), each
 * followed by the results of its tool calls that have one (`output-available`, `output-error`,
 * `output-denied`). Tool calls still open (streaming, waiting for approval, approved) stay
 * without a result. `data-*`, `source-*` and assistant `file` parts are the UI's and are skipped,
 * except `data-phi-extension` parts, which become phi-rx extension messages. Throws a TypeError
 * naming the message and part for anything it cannot take: a `system` message (the server's
 * `systemPrompt` is the one), a file that is not an inline image or text, a malformed part.
 */
export function fromUIMessages(messages: readonly UIMessage[], options: FromUIMessagesOptions = {}): AgentMessage[] {
  if (!Array.isArray(messages)) throw new TypeError(`fromUIMessages: messages must be an array, got ${typeof messages}`);
  const now = options.now ?? Date.now();
  const out: AgentMessage[] = [];
  messages.forEach((message, i) => {
    const where = `messages[${i}]`;
    if (message === null || typeof message !== 'object' || !Array.isArray(message.parts)) throw new TypeError(`fromUIMessages: ${where} must be an object with a parts array`);
    message.parts.forEach((part: unknown, j: number) => {
      if (part === null || typeof part !== 'object' || typeof (part as { type?: unknown }).type !== 'string') throw new TypeError(`fromUIMessages: ${where}.parts[${j}] must be an object with a string type`);
    });
    if (message.role === 'user') out.push(userOf(message.parts, where, now));
    else if (message.role === 'assistant') out.push(...assistantOf(message.parts, where, now, options));
    else if (message.role === 'system') throw new TypeError(`fromUIMessages: ${where} is a system message; the server's systemPrompt is the system prompt, a client may not send one`);
    else throw new TypeError(`fromUIMessages: ${where} has role ${JSON.stringify((message as { role: unknown }).role)}; expected user or assistant`);
  });
  return out;
}

function userOf(parts: readonly UIMessagePart[], where: string, now: number): UserMessage {
  const content: UserContent[] = [];
  parts.forEach((part, j) => {
    const at = `${where}.parts[${j}]`;
    if (part.type === 'text') content.push({ type: 'text', text: stringField(part.text, at, 'text') });
    else if (part.type === 'file') content.push(fileContent(part.url, part.mediaType, at));
  });
  return { role: 'user', content, timestamp: now };
}

function assistantOf(parts: readonly UIMessagePart[], where: string, now: number, options: FromUIMessagesOptions): AgentMessage[] {
  const out: AgentMessage[] = [];
  let content: AssistantContent[] = [];
  let results: ToolResultMessage[] = [];
  const flush = () => {
    if (content.length > 0) out.push(assistant(content, now, options));
    out.push(...results);
    content = [];
    results = [];
  };
  parts.forEach((part, j) => {
    const at = `${where}.parts[${j}]`;
    if (part.type === 'step-start') flush();
    else if (part.type === 'text') content.push({ type: 'text', text: stringField(part.text, at, 'text') });
    else if (part.type === 'reasoning') content.push(thinkingOf(part.text, part.providerMetadata, at));
    else if (isUIToolPart(part)) {
      const name = uiToolName(part);
      if (typeof part.toolCallId !== 'string' || part.toolCallId === '' || name === '') throw new TypeError(`fromUIMessages: ${at} (${part.type}) needs a toolCallId and a tool name`);
      const args = part.input ?? {};
      if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new TypeError(`fromUIMessages: ${at} (${part.type}): input must be an object, got ${Array.isArray(args) ? 'an array' : typeof args}`);
      content.push({ type: 'toolCall', id: part.toolCallId, name, arguments: args as Record<string, unknown> });
      const result = resultOf(part, name, now);
      if (result) results.push(result);
    } else if (part.type === 'data-phi-extension') {
      const data = (part as { data?: { kind?: unknown; data?: unknown } }).data;
      if (typeof data?.kind === 'string') out.push({ role: 'extension', kind: data.kind, data: data.data, timestamp: now });
    }
  });
  flush();
  return out;
}

function assistant(content: AssistantContent[], now: number, options: FromUIMessagesOptions): AssistantMessage {
  const calls = content.some((c) => c.type === 'toolCall');
  return { role: 'assistant', content, stopReason: calls ? 'toolUse' : 'stop', model: options.model ?? 'unknown', provider: options.provider ?? 'ai-sdk', usage: Usage.empty(), timestamp: now };
}

function thinkingOf(text: unknown, meta: Record<string, Record<string, unknown>> | undefined, at: string): AssistantContent {
  const phi = meta?.['phi'];
  const block: AssistantContent = { type: 'thinking', thinking: stringField(text, at, 'text') };
  if (typeof phi?.['signature'] === 'string') block.signature = phi['signature'];
  if (phi?.['redacted'] === true) block.redacted = true;
  return block;
}

/** The tool result message of a finished tool part; undefined while the call is open. */
function resultOf(part: UIToolPart, toolName: string, now: number): ToolResultMessage | undefined {
  const base = { role: 'toolResult' as const, toolCallId: part.toolCallId, toolName, timestamp: now };
  if (part.state === 'output-available' && !part.preliminary) return { ...base, ...outputContent(part.output), isError: false };
  if (part.state === 'output-error') return { ...base, content: [{ type: 'text', text: part.errorText ?? 'the tool failed' }], isError: true };
  if (part.state === 'output-denied') {
    const reason = part.approval?.reason;
    return { ...base, content: [{ type: 'text', text: `Tool call denied${reason ? `: ${reason}` : ''}` }], isError: true };
  }
  return undefined;
}

/** A tool output: phi-rx's own `{ content, details? }` as it is, anything else as JSON text. */
function outputContent(output: unknown): { content: ToolResultContent[]; details?: unknown } {
  const value = output as { content?: unknown; details?: unknown } | null;
  if (value && typeof value === 'object' && Array.isArray(value.content) && value.content.every(isResultBlock)) {
    return value.details === undefined ? { content: value.content } : { content: value.content, details: value.details };
  }
  return { content: [{ type: 'text', text: typeof output === 'string' ? output : JSON.stringify(output ?? null) }] };
}

function isResultBlock(c: unknown): c is ToolResultContent {
  const b = c as { type?: unknown; text?: unknown; data?: unknown; mimeType?: unknown } | null;
  return !!b && ((b.type === 'text' && typeof b.text === 'string') || (b.type === 'image' && typeof b.data === 'string' && typeof b.mimeType === 'string'));
}

/** An inline file: `data:<type>;base64,...` images become image blocks, `text/*` text blocks. */
function fileContent(url: unknown, mediaType: unknown, at: string): UserContent {
  const match = typeof url === 'string' ? /^data:([^;,]+)?(;base64)?,(.*)$/s.exec(url) : null;
  if (!match) throw new TypeError(`fromUIMessages: ${at} is a file by URL; only inline files (data: URLs) are taken, the server fetches nothing a client names`);
  const type = typeof mediaType === 'string' && mediaType !== '' ? mediaType : (match[1] ?? 'text/plain');
  const payload = match[3]!;
  if (type.startsWith('image/')) {
    if (!match[2]) throw new TypeError(`fromUIMessages: ${at}: an image must be base64 in its data: URL`);
    return { type: 'image', data: payload, mimeType: type };
  }
  if (type.startsWith('text/')) {
    const text = match[2] ? new TextDecoder().decode(Uint8Array.from(atob(payload), (ch) => ch.charCodeAt(0))) : decodeURIComponent(payload);
    return { type: 'text', text };
  }
  throw new TypeError(`fromUIMessages: ${at} is a ${type} file; phi-rx messages take images and text files`);
}

function stringField(value: unknown, at: string, field: string): string {
  if (typeof value !== 'string') throw new TypeError(`fromUIMessages: ${at}.${field} must be a string, got ${value === null ? 'null' : typeof value}`);
  return value;
}
