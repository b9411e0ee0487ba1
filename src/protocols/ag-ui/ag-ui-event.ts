/**
 * The AG-UI protocol's shapes as plain types (protocol 1.0, `@ag-ui/core` 1.x): the events phi-rx
 * emits and the messages and run input it reads. Written here so that the mapping needs no AG-UI
 * package at runtime; the tests check every value against `@ag-ui/core`'s own schemas.
 */

/** Open metadata on an event or a message; phi-rx keeps its own fields under the `phi-rx` key. */
export type AgUiMetadata = Record<string, unknown>;

/** What every event carries. */
export interface AgUiEventBase {
  timestamp?: number;
  metadata?: AgUiMetadata;
}

/** A source of media in a content part: inline base64 data, a URL, or a provider's file id. */
export type AgUiPartSource =
  | { type: 'data'; value: string; mimeType: string }
  | { type: 'url'; value: string; mimeType?: string }
  | { type: 'file'; value: string; provider?: string; mimeType?: string };

/** A part of a user or tool message's content. */
export type AgUiContentPart =
  | { type: 'text'; text: string; metadata?: unknown }
  | { type: 'image' | 'audio' | 'video' | 'document'; source: AgUiPartSource; metadata?: unknown };

export interface AgUiToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  metadata?: AgUiMetadata;
}

export type AgUiMessage =
  | { id: string; role: 'developer' | 'system'; content: string; name?: string; metadata?: AgUiMetadata }
  | { id: string; role: 'user'; content: string | AgUiContentPart[]; name?: string; metadata?: AgUiMetadata }
  | { id: string; role: 'assistant'; content?: string; toolCalls?: AgUiToolCall[]; name?: string; metadata?: AgUiMetadata }
  | { id: string; role: 'tool'; content: string | AgUiContentPart[]; toolCallId: string; error?: string; metadata?: AgUiMetadata }
  | { id: string; role: 'reasoning'; content: string; encryptedValue?: string; metadata?: AgUiMetadata }
  | { id: string; role: 'activity'; activityType: string; content: Record<string, unknown>; metadata?: AgUiMetadata };

/** A tool the client offers (a frontend tool): the model may call it, the client runs it. */
export interface AgUiTool {
  name: string;
  description: string;
  parameters?: unknown;
  metadata?: AgUiMetadata;
}

/** The answer to one interrupt of the previous run. */
export interface AgUiResumeEntry {
  interruptId: string;
  status: 'resolved' | 'cancelled';
  payload?: unknown;
  metadata?: AgUiMetadata;
}

/** What a client posts to run an agent. */
export interface AgUiRunAgentInput {
  threadId: string;
  runId: string;
  parentRunId?: string;
  state?: unknown;
  messages: AgUiMessage[];
  tools: AgUiTool[];
  context: Array<{ description: string; value: string }>;
  forwardedProps?: unknown;
  resume?: AgUiResumeEntry[];
}

/** Something the run needs from the client before it can go on (an approval). */
export interface AgUiInterrupt {
  id: string;
  reason: string;
  message?: string;
  toolCallId?: string;
  responseSchema?: Record<string, unknown>;
  metadata?: AgUiMetadata;
}

export type AgUiRunOutcome =
  | { type: 'success'; pendingToolCallIds?: string[] }
  | { type: 'interrupt'; interrupts: AgUiInterrupt[] }
  | { type: 'cancelled' };

export interface AgUiTokenUsage {
  provider?: string;
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  cachedInputTokens?: number;
  cacheWriteInputTokens?: number;
}

export type AgUiEvent = AgUiEventBase &
  (
    | { type: 'RUN_STARTED'; threadId: string; runId: string; parentRunId?: string; input?: AgUiRunAgentInput }
    | { type: 'RUN_FINISHED'; threadId: string; runId: string; result?: unknown; outcome?: AgUiRunOutcome; usage?: AgUiTokenUsage[] }
    | { type: 'RUN_ERROR'; message: string; code?: string }
    | { type: 'STEP_STARTED' | 'STEP_FINISHED'; stepName: string }
    | { type: 'TEXT_MESSAGE_START'; messageId: string; role: 'assistant' | 'user' }
    | { type: 'TEXT_MESSAGE_CONTENT'; messageId: string; delta: string }
    | { type: 'TEXT_MESSAGE_END'; messageId: string }
    | { type: 'REASONING_START' | 'REASONING_END' | 'REASONING_MESSAGE_END'; messageId: string }
    | { type: 'REASONING_MESSAGE_START'; messageId: string; role: 'reasoning' }
    | { type: 'REASONING_MESSAGE_CONTENT'; messageId: string; delta: string }
    | { type: 'REASONING_ENCRYPTED_VALUE'; subtype: 'message' | 'tool-call'; entityId: string; encryptedValue: string }
    | { type: 'TOOL_CALL_START'; toolCallId: string; toolCallName: string; parentMessageId?: string }
    | { type: 'TOOL_CALL_ARGS'; toolCallId: string; delta: string }
    | { type: 'TOOL_CALL_END'; toolCallId: string }
    | { type: 'TOOL_CALL_RESULT'; messageId: string; toolCallId: string; content: string | AgUiContentPart[]; role: 'tool' }
    | { type: 'MESSAGES_SNAPSHOT'; messages: AgUiMessage[] }
    | { type: 'STATE_SNAPSHOT'; snapshot: unknown }
    | { type: 'STATE_DELTA'; delta: unknown[] }
    | { type: 'ACTIVITY_SNAPSHOT'; messageId: string; activityType: string; content: Record<string, unknown>; replace?: boolean }
    | { type: 'CUSTOM'; name: string; value: unknown }
  );

export type AgUiEventType = AgUiEvent['type'];

/** The key under which phi-rx keeps its own fields in AG-UI metadata (AG-UI reserves `ag-ui`). */
export const PHI_RX_METADATA = 'phi-rx';
