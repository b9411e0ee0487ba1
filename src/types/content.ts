/** A plain text block. */
export interface TextContent {
  type: 'text';
  text: string;
}

/** An inline image: base64 bytes, never a path. */
export interface ImageContent {
  type: 'image';
  data: string;
  mimeType: string;
}

/**
 * Chain-of-thought from the model. Shown to users, never re-sent as text to the
 * provider that made it; `signature` must be echoed back unmodified.
 * `redacted` marks provider-encrypted thinking whose payload sits in `signature`.
 */
export interface ThinkingContent {
  type: 'thinking';
  thinking: string;
  signature?: string;
  redacted?: boolean;
}

/** JSON value as it crosses the wire. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** The model's request to run a tool. `id` links it to the ToolResult message. */
export interface ToolCall {
  type: 'toolCall';
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export type Content = TextContent | ImageContent | ThinkingContent | ToolCall;
export type UserContent = TextContent | ImageContent;
export type AssistantContent = TextContent | ThinkingContent | ToolCall;
export type ToolResultContent = TextContent | ImageContent;

export const text = (value: string): TextContent => ({ type: 'text', text: value });
export const image = (data: string, mimeType: string): ImageContent => ({ type: 'image', data, mimeType });
