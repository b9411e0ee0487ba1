import { z } from 'zod';
import { STOP_REASONS, type AgentMessage } from './message.js';
import type { StopReason } from './message.js';
import { AgentError } from './errors.js';
import { locateIssue } from './zod-issue.js';

/**
 * zod schemas for everything loaded from JSON. They run at the boundaries (restore, session
 * load, tool arguments), never on the streaming hot path.
 */

export const TextContentSchema = z.object({ type: z.literal('text'), text: z.string() });
export const ImageContentSchema = z
  .object({ type: z.literal('image'), data: z.string(), mimeType: z.string().optional(), mime_type: z.string().optional() })
  .transform((v, ctx) => {
    const mimeType = v.mimeType ?? v.mime_type;
    if (mimeType === undefined) {
      ctx.addIssue({ code: 'custom', message: 'image content needs mimeType', path: ['mimeType'] });
      return z.NEVER;
    }
    return { type: 'image' as const, data: v.data, mimeType };
  });
export const ThinkingContentSchema = z.object({
  type: z.literal('thinking'),
  thinking: z.string(),
  signature: z.string().optional(),
  redacted: z.boolean().optional(),
});
export const ToolCallSchema = z.object({
  type: z.literal('toolCall'),
  id: z.string(),
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()),
});

export const UserContentSchema = z.union([TextContentSchema, ImageContentSchema]);
export const AssistantContentSchema = z.discriminatedUnion('type', [TextContentSchema, ThinkingContentSchema, ToolCallSchema]);

export const UsageSchema = z
  .object({
    input: z.number().default(0),
    output: z.number().default(0),
    reasoning: z.number().default(0),
    cacheRead: z.number().optional(),
    cacheWrite: z.number().optional(),
    cache_read: z.number().optional(),
    cache_write: z.number().optional(),
    totalTokens: z.number().optional(),
    total_tokens: z.number().optional(),
  })
  .transform((u) => ({
    input: u.input,
    output: u.output,
    reasoning: u.reasoning,
    cacheRead: u.cacheRead ?? u.cache_read ?? 0,
    cacheWrite: u.cacheWrite ?? u.cache_write ?? 0,
    totalTokens: u.totalTokens ?? u.total_tokens ?? 0,
  }));

export const StopReasonSchema = z.enum(STOP_REASONS as [StopReason, ...StopReason[]]);
export const TurnIdSchema = z.object({ loopId: z.string(), turnIndex: z.number() });

const turnId = { turnId: TurnIdSchema.optional() };

export const UserMessageSchema = z.object({
  role: z.literal('user'),
  content: z.union([z.string().transform((t) => [{ type: 'text' as const, text: t }]), z.array(UserContentSchema)]),
  timestamp: z.number().default(0),
  ...turnId,
});

export const AssistantMessageSchema = z
  .object({
    role: z.literal('assistant'),
    content: z.array(AssistantContentSchema),
    stopReason: StopReasonSchema.optional(),
    stop_reason: StopReasonSchema.optional(),
    model: z.string().default(''),
    provider: z.string().default(''),
    usage: UsageSchema.default({ input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 }),
    timestamp: z.number().default(0),
    errorMessage: z.string().optional(),
    error_message: z.string().optional(),
    ...turnId,
  })
  .transform(({ stop_reason, error_message, stopReason, errorMessage, ...rest }) => {
    const message = { ...rest, stopReason: stopReason ?? stop_reason ?? 'stop' };
    const err = errorMessage ?? error_message;
    return err === undefined ? message : { ...message, errorMessage: err };
  });

export const ToolResultMessageSchema = z
  .object({
    role: z.literal('toolResult'),
    toolCallId: z.string().optional(),
    tool_call_id: z.string().optional(),
    toolName: z.string().optional(),
    tool_name: z.string().optional(),
    content: z.array(UserContentSchema),
    isError: z.boolean().optional(),
    is_error: z.boolean().optional(),
    timestamp: z.number().default(0),
    details: z.unknown().optional(),
    ...turnId,
  })
  .transform((v, ctx) => {
    const toolCallId = v.toolCallId ?? v.tool_call_id;
    const toolName = v.toolName ?? v.tool_name;
    if (toolCallId === undefined) ctx.addIssue({ code: 'custom', message: 'toolResult needs toolCallId', path: ['toolCallId'] });
    if (toolName === undefined) ctx.addIssue({ code: 'custom', message: 'toolResult needs toolName', path: ['toolName'] });
    if (toolCallId === undefined || toolName === undefined) return z.NEVER;
    const out = {
      role: 'toolResult' as const,
      toolCallId,
      toolName,
      content: v.content,
      isError: v.isError ?? v.is_error ?? false,
      timestamp: v.timestamp,
      ...(v.details === undefined ? {} : { details: v.details }),
      ...(v.turnId === undefined ? {} : { turnId: v.turnId }),
    };
    return out;
  });

export const ExtensionMessageSchema = z.object({
  role: z.literal('extension'),
  kind: z.string(),
  data: z.unknown(),
  timestamp: z.number().optional(),
});

export const AgentMessageSchema = z.discriminatedUnion('role', [
  UserMessageSchema,
  AssistantMessageSchema,
  ToolResultMessageSchema,
  ExtensionMessageSchema,
]);

export const AgentMessagesSchema = z.array(AgentMessageSchema);

/** `messages[3].content[0].type` from a zod issue path. */
export function formatPath(root: string, path: ReadonlyArray<PropertyKey>): string {
  let out = root;
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `.${String(p)}`;
  return out;
}

/** The first issue of a zod error as "path: message". */
export function describeZodError(root: string, error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return `${root}: invalid`;
  const located = locateIssue(issue);
  return `${formatPath(root, located.path)}: ${located.message}`;
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
  const parsed = AgentMessagesSchema.safeParse(list);
  if (!parsed.success) throw new AgentError('InvalidJson', describeZodError('messages', parsed.error));
  return parsed.data as AgentMessage[];
}
