import type { AgentMessage, AssistantMessage, ToolResultMessage, StopReason, TurnId } from '../../types/message.js';
import type { AssistantContent, ImageContent, TextContent, ThinkingContent, ToolCall } from '../../types/content.js';
import { Usage } from '../../types/usage.js';
import { PHI_RX_METADATA, type AgUiContentPart, type AgUiMessage, type AgUiToolCall } from './ag-ui-event.js';
import { AG_UI_DEVELOPER_KIND, AG_UI_SYSTEM_KIND } from './to-ag-ui-messages.js';

/** An AG-UI message phi-rx cannot take, with where it is (`messages[2].content[1]`) and why. */
export class AgUiInputError extends Error {
  override readonly name = 'AgUiInputError';
  constructor(readonly path: string, detail: string) {
    super(`${path}: ${detail}`);
  }
}

export interface FromAgUiMessagesOptions {
  /** The timestamp of a message that carries none of phi-rx's metadata (default `Date.now()`). */
  now?: () => number;
  /** Where the messages are, for error paths (default `messages`). */
  path?: string;
}

/**
 * AG-UI messages as phi-rx messages: the inverse of {@link toAgUiMessages}, and the reading of
 * any AG-UI client's conversation. `reasoning` messages fold into the assistant message after
 * them as thinking blocks; `tool` messages become tool results (named after the call they answer,
 * an `error` making them errors); `activity` messages become extension messages; `system` and
 * `developer` messages become extension messages of kind `ag-ui.system` / `ag-ui.developer`
 * (kept in place, never sent to the model as turns: give their text to the system prompt).
 * What phi-rx keeps in `metadata['phi-rx']` is restored; a message without it gets defaults.
 * Content phi-rx cannot hold (an image by URL, audio, video, documents) or tool arguments that
 * are not a JSON object throw an {@link AgUiInputError} naming the place.
 *
 * @example
 * fromAgUiMessages([{ id: 'u1', role: 'user', content: 'hi' }], { now: () => 0 }); // [{ role: 'user', content: [{ type: 'text', text: 'hi' }], timestamp: 0 }]
 */
export function fromAgUiMessages(messages: readonly AgUiMessage[], options: FromAgUiMessagesOptions = {}): AgentMessage[] {
  const now = options.now ?? Date.now;
  const path = options.path ?? 'messages';
  if (!Array.isArray(messages)) throw new AgUiInputError(path, `expected an array of messages, got ${typeof messages}`);
  const out: AgentMessage[] = [];
  const toolNames = new Map<string, string>();
  let thinking: ThinkingContent[] = [];
  const flushThinking = () => {
    if (thinking.length === 0) return;
    out.push(assistantOf(undefined, thinking, now));
    thinking = [];
  };
  messages.forEach((m, i) => {
    const at = `${path}[${i}]`;
    if (m === null || typeof m !== 'object') throw new AgUiInputError(at, 'expected a message object');
    const fields = phiRxOf(m.metadata);
    if (m.role !== 'assistant' && m.role !== 'reasoning') flushThinking();
    switch (m.role) {
      case 'user':
        out.push({ role: 'user', content: partsOf(m.content, `${at}.content`), timestamp: numberOr(fields.timestamp, now), ...turnIdOf(fields) });
        return;
      case 'reasoning':
        thinking.push(thinkingOf(m, at));
        return;
      case 'assistant': {
        const calls = (m.toolCalls ?? []).map((c: AgUiToolCall, j: number) => toolCallOf(c, `${at}.toolCalls[${j}]`));
        for (const c of calls) toolNames.set(c.id, c.name);
        out.push(assistantOf(m, thinking, now, calls));
        thinking = [];
        return;
      }
      case 'tool':
        out.push(toolResultOf(m, at, fields, toolNames, now));
        return;
      case 'activity':
        out.push({ role: 'extension', kind: m.activityType, data: m.content?.['data'], ...timestampOf(fields) });
        return;
      case 'system':
      case 'developer':
        out.push({ role: 'extension', kind: m.role === 'system' ? AG_UI_SYSTEM_KIND : AG_UI_DEVELOPER_KIND, data: { content: m.content }, ...timestampOf(fields) });
        return;
      default:
        throw new AgUiInputError(`${at}.role`, `unknown role ${JSON.stringify((m as { role?: unknown }).role)} (expected user, assistant, tool, reasoning, activity, system or developer)`);
    }
  });
  flushThinking();
  return out;
}

/** The text of the `system` and `developer` messages {@link fromAgUiMessages} kept as extension messages, in order. */
export function instructionsOf(messages: readonly AgentMessage[]): string[] {
  const out: string[] = [];
  for (const m of messages) {
    if (m.role === 'extension' && (m.kind === AG_UI_SYSTEM_KIND || m.kind === AG_UI_DEVELOPER_KIND)) out.push(String((m.data as { content?: unknown }).content));
  }
  return out;
}

function assistantOf(m: Extract<AgUiMessage, { role: 'assistant' }> | undefined, thinking: ThinkingContent[], now: () => number, calls: ToolCall[] = []): AssistantMessage {
  const fields = phiRxOf(m?.metadata);
  const text = m?.content ?? '';
  const content = Array.isArray(fields.blocks) ? laidOut(fields.blocks as string[], text, thinking, calls) : defaultOrder(text, thinking, calls);
  const { blocks: _b, turnId, ...rest } = fields;
  return {
    role: 'assistant',
    content,
    stopReason: (typeof rest.stopReason === 'string' ? rest.stopReason : calls.length > 0 ? 'toolUse' : 'stop') as StopReason,
    model: typeof rest.model === 'string' ? rest.model : '',
    provider: typeof rest.provider === 'string' ? rest.provider : '',
    usage: (rest.usage as Usage | undefined) ?? Usage.empty(),
    timestamp: numberOr(rest.timestamp, now),
    ...(typeof rest.errorMessage === 'string' && { errorMessage: rest.errorMessage }),
    ...(turnId !== undefined && { turnId }),
  } as AssistantMessage;
}

/** The blocks in the order `metadata['phi-rx'].blocks` recorded (`r` thinking, `t{length}` text, `c` tool call). */
function laidOut(blocks: readonly string[], text: string, thinking: ThinkingContent[], calls: ToolCall[]): AssistantContent[] {
  const out: AssistantContent[] = [];
  let t = 0;
  let r = 0;
  let c = 0;
  for (const b of blocks) {
    if (b === 'r' && r < thinking.length) out.push(thinking[r++]!);
    else if (b === 'c' && c < calls.length) out.push(calls[c++]!);
    else if (b.startsWith('t')) {
      const length = Number(b.slice(1));
      out.push({ type: 'text', text: text.slice(t, t + length) });
      t += length;
    }
  }
  // What the layout did not account for (edited by the client) goes at the end, nothing dropped.
  if (t < text.length) out.push({ type: 'text', text: text.slice(t) });
  out.push(...thinking.slice(r), ...calls.slice(c));
  return out;
}

function defaultOrder(text: string, thinking: ThinkingContent[], calls: ToolCall[]): AssistantContent[] {
  return [...thinking, ...(text === '' ? [] : [{ type: 'text' as const, text }]), ...calls];
}

function thinkingOf(m: Extract<AgUiMessage, { role: 'reasoning' }>, at: string): ThinkingContent {
  if (typeof m.content !== 'string') throw new AgUiInputError(`${at}.content`, 'a reasoning message\'s content must be a string');
  const block: ThinkingContent = { type: 'thinking', thinking: m.content };
  if (m.encryptedValue !== undefined) block.signature = m.encryptedValue;
  const redacted = phiRxOf(m.metadata).redacted;
  if (typeof redacted === 'boolean') block.redacted = redacted;
  return block;
}

function toolCallOf(c: { id: string; function: { name: string; arguments: string } }, at: string): ToolCall {
  let args: unknown;
  try {
    args = c.function.arguments === '' ? {} : JSON.parse(c.function.arguments);
  } catch (e) {
    throw new AgUiInputError(`${at}.function.arguments`, `not JSON: ${(e as Error).message}`);
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) throw new AgUiInputError(`${at}.function.arguments`, 'tool arguments must be a JSON object');
  return { type: 'toolCall', id: c.id, name: c.function.name, arguments: args as Record<string, unknown> };
}

function toolResultOf(m: Extract<AgUiMessage, { role: 'tool' }>, at: string, fields: Record<string, unknown>, names: Map<string, string>, now: () => number): ToolResultMessage {
  const content = partsOf(m.content, `${at}.content`);
  if (m.error !== undefined && content.length === 0) content.push({ type: 'text', text: m.error });
  const { timestamp, toolName, isError, turnId, ...rest } = fields;
  return {
    role: 'toolResult',
    toolCallId: m.toolCallId,
    toolName: typeof toolName === 'string' ? toolName : (names.get(m.toolCallId) ?? ''),
    content,
    isError: typeof isError === 'boolean' ? isError : m.error !== undefined,
    timestamp: numberOr(timestamp, now),
    ...rest,
    ...(turnId !== undefined && { turnId }),
  } as ToolResultMessage;
}

function partsOf(content: string | AgUiContentPart[], at: string): Array<TextContent | ImageContent> {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw new AgUiInputError(at, 'expected a string or an array of content parts');
  return content.map((part, j): TextContent | ImageContent => {
    if (part.type === 'text') return { type: 'text', text: part.text };
    if (part.type === 'image' && part.source?.type === 'data') return { type: 'image', data: part.source.value, mimeType: part.source.mimeType };
    const kind = part.type === 'image' ? `an image by ${String((part.source as { type?: unknown } | undefined)?.type)}` : `a part of type ${JSON.stringify(part.type)}`;
    throw new AgUiInputError(`${at}[${j}]`, `${kind} is not supported: phi-rx takes text and inline (base64 data) images`);
  });
}

function phiRxOf(metadata: Record<string, unknown> | undefined): Record<string, unknown> {
  const fields = metadata?.[PHI_RX_METADATA];
  return fields !== null && typeof fields === 'object' ? (fields as Record<string, unknown>) : {};
}

function numberOr(value: unknown, now: () => number): number {
  return typeof value === 'number' ? value : now();
}

function timestampOf(fields: Record<string, unknown>): { timestamp?: number } {
  return typeof fields.timestamp === 'number' ? { timestamp: fields.timestamp } : {};
}

function turnIdOf(fields: Record<string, unknown>): { turnId?: TurnId } {
  return fields.turnId === undefined ? {} : { turnId: fields.turnId as TurnId };
}
