import type { ProviderMetadata } from './ui-message-chunk.js';

/**
 * The messages `useChat` keeps and sends (the AI SDK's `UIMessage`), as plain types: what
 * `fromUIMessages` reads from a request and `toUIMessages` writes for persistence.
 */

export type UIToolState =
  | 'input-streaming'
  | 'input-available'
  | 'approval-requested'
  | 'approval-responded'
  | 'output-available'
  | 'output-error'
  | 'output-denied';

/** A tool call part: `tool-<name>` (static) or `dynamic-tool` (with `toolName`). */
export interface UIToolPart {
  type: `tool-${string}` | 'dynamic-tool';
  toolName?: string;
  toolCallId: string;
  state: UIToolState;
  input?: unknown;
  output?: unknown;
  errorText?: string;
  approval?: { id: string; approved?: boolean; reason?: string };
  providerExecuted?: boolean;
  preliminary?: boolean;
}

export type UIMessagePart =
  | { type: 'text'; text: string; state?: 'streaming' | 'done'; providerMetadata?: ProviderMetadata }
  | { type: 'reasoning'; text: string; state?: 'streaming' | 'done'; providerMetadata?: ProviderMetadata }
  | { type: 'file'; mediaType: string; url: string; filename?: string; providerMetadata?: ProviderMetadata }
  | { type: 'step-start' }
  | { type: 'source-url'; sourceId: string; url: string; title?: string }
  | { type: 'source-document'; sourceId: string; mediaType: string; title: string; filename?: string }
  | { type: `data-${string}`; id?: string; data: unknown }
  | UIToolPart;

export interface UIMessage {
  id: string;
  role: 'system' | 'user' | 'assistant';
  metadata?: unknown;
  parts: UIMessagePart[];
}

/** True for a tool call part (`tool-<name>` or `dynamic-tool`). */
export function isUIToolPart(part: { type: string }): part is UIToolPart {
  return part.type === 'dynamic-tool' || (part.type.startsWith('tool-') && part.type.length > 5);
}

/** The tool name of a tool part. */
export function uiToolName(part: UIToolPart): string {
  return part.type === 'dynamic-tool' ? (part.toolName ?? '') : part.type.slice(5);
}
