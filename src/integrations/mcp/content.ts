import type { ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import type { ToolResultContent } from '../../types/content.js';
import type { McpContentBlock } from './types.js';
import type { ToolResult } from '../../types/tool.js';

/** What `tools/call` answered, in the current form or the pre-2024-11-05 `{ toolResult }` form. */
export interface McpCallResult {
  content?: McpContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  toolResult?: unknown;
  [key: string]: unknown;
}

/**
 * Maps an MCP tool result to a phi-rx ToolResult. The model gets text and images; what it cannot
 * read (audio, binary resources) becomes a short text note so it still knows something came back.
 * `details` keeps the server's structured content for the application.
 */
export function toToolResult(result: McpCallResult): ToolResult {
  const blocks = result.content ?? [];
  // Blocks come from the SDK's validated result; an unknown `type` takes the default branch.
  let content = blocks.map((block) => toResultContent(block as ContentBlock));
  if (content.length === 0 && result.structuredContent !== undefined) {
    content = [{ type: 'text', text: JSON.stringify(result.structuredContent) }];
  }
  if (content.length === 0 && 'toolResult' in result) {
    content = [{ type: 'text', text: stringify(result.toolResult) }];
  }
  const toolResult: ToolResult = { content };
  if (result.isError === true) toolResult.isError = true;
  if (result.structuredContent !== undefined) toolResult.details = { structuredContent: result.structuredContent };
  return toolResult;
}

function toResultContent(block: ContentBlock): ToolResultContent {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'image':
      return { type: 'image', data: block.data, mimeType: block.mimeType };
    case 'audio':
      return note(`[audio content: ${block.mimeType}, ${base64Bytes(block.data)} bytes, not shown]`);
    case 'resource': {
      const r = block.resource;
      if ('text' in r && typeof r.text === 'string') {
        return note(`[resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ''}]\n${r.text}`);
      }
      const blob = 'blob' in r && typeof r.blob === 'string' ? r.blob : '';
      if (r.mimeType?.startsWith('image/') && blob.length > 0) return { type: 'image', data: blob, mimeType: r.mimeType };
      return note(`[binary resource ${r.uri} (${r.mimeType ?? 'unknown type'}, ${base64Bytes(blob)} bytes), not shown]`);
    }
    case 'resource_link': {
      const parts = [`[resource link: ${block.name} ${block.uri}${block.mimeType ? ` (${block.mimeType})` : ''}]`];
      if (block.description) parts.push(block.description);
      return note(parts.join(' '));
    }
    default:
      return note(stringify(block));
  }
}

const note = (text: string): ToolResultContent => ({ type: 'text', text });

function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
