import type { AssistantContent, ToolCall, ToolResultContent, UserContent } from './content.js';
import { Usage } from './usage.js';

/** Why generation stopped. camelCase on the wire. */
export type StopReason =
  | 'stop'
  | 'length'
  | 'toolUse'
  | 'error'
  | 'aborted'
  | 'maxTurns'
  | 'userStop'
  | 'handoff'
  | 'guardRail'
  | 'contextCompacted'
  | 'paused';

export const STOP_REASONS: readonly StopReason[] = [
  'stop', 'length', 'toolUse', 'error', 'aborted', 'maxTurns', 'userStop', 'handoff', 'guardRail',
  'contextCompacted', 'paused',
];

export interface UserMessage {
  role: 'user';
  content: UserContent[];
  timestamp: number;
}

export interface AssistantMessage {
  role: 'assistant';
  content: AssistantContent[];
  stopReason: StopReason;
  model: string;
  provider: string;
  usage: Usage;
  timestamp: number;
  errorMessage?: string;
}

export interface ToolResultMessage {
  role: 'toolResult';
  toolCallId: string;
  toolName: string;
  content: ToolResultContent[];
  isError: boolean;
  timestamp: number;
  /** Structured metadata for the app (exit codes, paths); never sent to the model. */
  details?: unknown;
}

export type Message = UserMessage | AssistantMessage | ToolResultMessage;

/** Which loop and turn produced a message. */
export interface TurnId {
  loopId: string;
  turnIndex: number;
}

/** A message bound for the model, flattened with an optional turn id (phi-core's JSON shape). */
export type LlmMessage = Message & { turnId?: TurnId };

/**
 * A copy of `message` with `turnId` set (the message itself is not changed). Not `{ ...message, turnId }`:
 * V8 (Node 20) gives every object made by a spread followed by a field the source lacks a hidden
 * class of its own once the code is hot, which costs a map per message and makes every read of
 * messages megamorphic; a copy made by `Object.assign` onto `{}` shares its hidden class.
 */
export function withTurnId<M extends Message>(message: M, turnId: TurnId): M & { turnId: TurnId } {
  // A message parsed from JSON may hold an own `__proto__` field, which Object.assign would make the copy's prototype.
  if (Object.hasOwn(message, '__proto__')) return { ...message, turnId };
  const out = Object.assign({}, message) as M & { turnId: TurnId };
  out.turnId = turnId;
  return out;
}

/** App-only message: streamed as events and stored, never sent to the model. */
export interface ExtensionMessage {
  role: 'extension';
  kind: string;
  data: unknown;
  timestamp?: number;
}

export type AgentMessage = LlmMessage | ExtensionMessage;

export const isExtension = (m: AgentMessage): m is ExtensionMessage => m.role === 'extension';
export const isLlm = (m: AgentMessage): m is LlmMessage => m.role !== 'extension';
export const isAssistant = (m: AgentMessage): m is AssistantMessage & { turnId?: TurnId } => m.role === 'assistant';
export const isToolResult = (m: AgentMessage): m is ToolResultMessage & { turnId?: TurnId } =>
  m.role === 'toolResult';
export const isUser = (m: AgentMessage): m is UserMessage & { turnId?: TurnId } => m.role === 'user';

/** A user message from text (the spec's `Message::user`). */
export function userMessage(content: string | UserContent[], timestamp = Date.now()): UserMessage {
  return {
    role: 'user',
    content: typeof content === 'string' ? [{ type: 'text', text: content }] : content,
    timestamp,
  };
}

export function extensionMessage(kind: string, data: unknown, timestamp = Date.now()): ExtensionMessage {
  return { role: 'extension', kind, data, timestamp };
}

/** An empty assistant message, the seed of a streamed response. */
export function emptyAssistant(model: string, provider: string, timestamp: number): AssistantMessage {
  return { role: 'assistant', content: [], stopReason: 'stop', model, provider, usage: Usage.empty(), timestamp };
}

export function toolCallsOf(m: AssistantMessage): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const c of m.content) if (c.type === 'toolCall') calls.push(c);
  return calls;
}

/** The concatenated text blocks of a message. */
export function textOf(m: { content: ReadonlyArray<{ type: string; text?: string }> }): string {
  let out = '';
  for (const c of m.content) if (c.type === 'text' && c.text !== undefined) out += c.text;
  return out;
}

/** Strips the routing envelope: what a provider receives. */
export function toLlmMessages(messages: readonly AgentMessage[]): Message[] {
  const out: Message[] = [];
  for (const m of messages) {
    if (m.role === 'extension') continue;
    if (m.turnId === undefined) out.push(m);
    else {
      const { turnId: _turnId, ...rest } = m;
      out.push(rest as Message);
    }
  }
  return out;
}
