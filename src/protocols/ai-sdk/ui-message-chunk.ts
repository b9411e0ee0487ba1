/**
 * The chunks of the AI SDK's UI message stream protocol (`x-vercel-ai-ui-message-stream: v1`), the
 * wire `useChat` (`@ai-sdk/react`, `@ai-sdk/vue`, ...) and `readUIMessageStream` read. Written here as
 * plain types so that phi-rx needs no `ai` package at run time; the tests check every chunk phi-rx
 * writes against the `ai` package's own `uiMessageChunkSchema`.
 */

/** Provider-specific data of a part: `{ [provider]: { [key]: JSON } }`. phi-rx writes `{ phi: ... }`. */
export type ProviderMetadata = Record<string, Record<string, unknown>>;

/** Why a response ended, in the AI SDK's words. */
export type UIFinishReason = 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'error' | 'other';

/** A `data-phi-*` chunk: a phi-rx event the protocol has no chunk for. Transient ones reach `onData` only, not the message. */
export interface PhiDataChunk {
  type: `data-phi-${string}`;
  id?: string;
  data: unknown;
  transient?: boolean;
}

export type UIMessageChunk =
  | { type: 'start'; messageId?: string; messageMetadata?: unknown }
  | { type: 'finish'; finishReason?: UIFinishReason; messageMetadata?: unknown }
  | { type: 'abort'; reason?: string }
  | { type: 'error'; errorText: string }
  | { type: 'start-step' }
  | { type: 'finish-step' }
  | { type: 'text-start' | 'text-end' | 'reasoning-start' | 'reasoning-end'; id: string; providerMetadata?: ProviderMetadata }
  | { type: 'text-delta' | 'reasoning-delta'; id: string; delta: string }
  | { type: 'tool-input-start'; toolCallId: string; toolName: string; dynamic?: boolean }
  | { type: 'tool-input-delta'; toolCallId: string; inputTextDelta: string }
  | { type: 'tool-input-available'; toolCallId: string; toolName: string; input: unknown; dynamic?: boolean }
  | { type: 'tool-approval-request'; approvalId: string; toolCallId: string }
  | { type: 'tool-output-available'; toolCallId: string; output: unknown; preliminary?: boolean; dynamic?: boolean }
  | { type: 'tool-output-error'; toolCallId: string; errorText: string; dynamic?: boolean }
  | { type: 'tool-output-denied'; toolCallId: string }
  | PhiDataChunk;

/** The `type`s of {@link UIMessageChunk}. */
export type UIMessageChunkType = UIMessageChunk['type'];
