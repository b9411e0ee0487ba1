import { STOP_REASONS, type AgentMessage, type AssistantMessage, type ExtensionMessage, type StopReason, type ToolResultMessage, type TurnId, type UserMessage } from './message.js';
import type { AssistantContent, ImageContent, TextContent, ThinkingContent, ToolCall, UserContent } from './content.js';
import type { Usage } from './usage.js';
import { AgentError } from './errors.js';
import { arrayOf, boolean, type Check, fail, number, object, oneOf, optional, recordOf, runCheck, string, tagged, unknown, withDefault } from './json-check.js';

/**
 * Checks for messages loaded from JSON (restore, session load, run control). They run at those
 * boundaries, never on the streaming hot path, and accept phi-core's snake_case spellings
 * (`stop_reason`, `tool_call_id`, `mime_type`, `cache_read`, …), returning the camelCase shape.
 * They are built on first use: importing this module builds nothing.
 */
export interface MessageChecks {
  /** One AgentMessage, told apart by `role`. */
  agentMessage: Check<AgentMessage>;
  agentMessages: Check<AgentMessage[]>;
  usage: Check<Usage>;
  stopReason: Check<StopReason>;
}

let built: MessageChecks | undefined;

export function messageChecks(): MessageChecks {
  return (built ??= buildMessageChecks());
}

function buildMessageChecks(): MessageChecks {
  const textContent: Check<TextContent> = object({ type: oneOf(['text']), text: string });

  const imageFields = object({ type: oneOf(['image']), data: string, mimeType: optional(string), mime_type: optional(string) });
  const imageContent: Check<ImageContent> = (v, path) => {
    const image = imageFields(v, path);
    const mimeType = image.mimeType ?? image.mime_type;
    return mimeType === undefined ? fail([...path, 'mimeType'], 'image content needs mimeType') : { type: 'image', data: image.data, mimeType };
  };

  const thinkingContent: Check<ThinkingContent> = object({ type: oneOf(['thinking']), thinking: string, signature: optional(string), redacted: optional(boolean) });
  const toolCall: Check<ToolCall> = object({ type: oneOf(['toolCall']), id: string, name: string, arguments: recordOf(unknown) });

  const userContent: Check<UserContent> = tagged<UserContent>('type', { text: textContent, image: imageContent });
  const assistantContent: Check<AssistantContent> = tagged<AssistantContent>('type', { text: textContent, thinking: thinkingContent, toolCall });

  const zero = (): number => 0;
  const usageFields = object({
    input: withDefault(number, zero),
    output: withDefault(number, zero),
    reasoning: withDefault(number, zero),
    cacheRead: optional(number),
    cacheWrite: optional(number),
    cache_read: optional(number),
    cache_write: optional(number),
    totalTokens: optional(number),
    total_tokens: optional(number),
  });

  const usage: Check<Usage> = (v, path) => {
    const u = usageFields(v, path);
    return {
      input: u.input,
      output: u.output,
      reasoning: u.reasoning,
      cacheRead: u.cacheRead ?? u.cache_read ?? 0,
      cacheWrite: u.cacheWrite ?? u.cache_write ?? 0,
      totalTokens: u.totalTokens ?? u.total_tokens ?? 0,
    };
  };

  const stopReason: Check<StopReason> = oneOf(STOP_REASONS);
  const turnId: Check<TurnId | undefined> = optional(object({ loopId: string, turnIndex: number }));

  /** A user message's content: blocks, or a string (one text block). */
  const userMessageContent: Check<UserContent[]> = (v, path) => {
    if (typeof v === 'string') return [{ type: 'text', text: v }];
    return Array.isArray(v) ? arrayOf(userContent)(v, path) : fail(path, 'Invalid input: expected string or array');
  };

  const userMessage: Check<UserMessage> = object({ role: oneOf(['user']), content: userMessageContent, timestamp: withDefault(number, zero), turnId });

  const assistantFields = object({
    role: oneOf(['assistant']),
    content: arrayOf(assistantContent),
    stopReason: optional(stopReason),
    stop_reason: optional(stopReason),
    model: withDefault(string, () => ''),
    provider: withDefault(string, () => ''),
    usage: withDefault(usage, () => ({ input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 })),
    timestamp: withDefault(number, zero),
    errorMessage: optional(string),
    error_message: optional(string),
    turnId,
  });

  const assistantMessage: Check<AssistantMessage> = (v, path) => {
    const { stop_reason, error_message, stopReason: reason, errorMessage, ...rest } = assistantFields(v, path);
    const message: AssistantMessage = { ...rest, stopReason: reason ?? stop_reason ?? 'stop' };
    const error = errorMessage ?? error_message;
    return error === undefined ? message : { ...message, errorMessage: error };
  };

  const toolResultFields = object({
    role: oneOf(['toolResult']),
    toolCallId: optional(string),
    tool_call_id: optional(string),
    toolName: optional(string),
    tool_name: optional(string),
    content: arrayOf(userContent),
    isError: optional(boolean),
    is_error: optional(boolean),
    timestamp: withDefault(number, zero),
    details: unknown,
    turnId,
  });

  const toolResultMessage: Check<ToolResultMessage> = (v, path) => {
    const r = toolResultFields(v, path);
    const toolCallId = r.toolCallId ?? r.tool_call_id;
    const toolName = r.toolName ?? r.tool_name;
    if (toolCallId === undefined) fail([...path, 'toolCallId'], 'toolResult needs toolCallId');
    if (toolName === undefined) fail([...path, 'toolName'], 'toolResult needs toolName');
    return {
      role: 'toolResult',
      toolCallId,
      toolName,
      content: r.content,
      isError: r.isError ?? r.is_error ?? false,
      timestamp: r.timestamp,
      ...(r.details === undefined ? {} : { details: r.details }),
      ...(r.turnId === undefined ? {} : { turnId: r.turnId }),
    };
  };

  const extensionMessage: Check<ExtensionMessage> = object({ role: oneOf(['extension']), kind: string, data: unknown, timestamp: optional(number) });

  /** One AgentMessage, told apart by `role`. */
  const agentMessage: Check<AgentMessage> = tagged<AgentMessage>('role', {
    user: userMessage,
    assistant: assistantMessage,
    toolResult: toolResultMessage,
    extension: extensionMessage,
  });

  const agentMessages: Check<AgentMessage[]> = arrayOf(agentMessage);

  return { agentMessage, agentMessages, usage, stopReason };
}

/**
 * Parses saved messages (a JSON array, or `{ messages: [...] }`), phi-core's `save_messages`
 * shape included. Throws AgentError('InvalidJson') naming the first bad path.
 */
export function parseMessagesJson(json: string): AgentMessage[] {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (e) {
    throw new AgentError('InvalidJson', `messages: not valid JSON (${(e as Error).message})`);
  }
  const list = Array.isArray(raw) ? raw : (raw as { messages?: unknown } | null)?.messages;
  const checked = runCheck(messageChecks().agentMessages, list, 'messages');
  if (!checked.ok) throw new AgentError('InvalidJson', checked.message);
  return checked.value;
}
