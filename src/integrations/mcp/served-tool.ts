import type { Observable } from 'rxjs';
import type { ApprovalDecision, ApprovalRequest } from '../../operators/request-approval.js';
import type { ToolResult } from '../../types/tool.js';
import type { McpContentBlock, McpToolInfo } from './types.js';

/*
 * What `serveMcp` serves, whatever it came from (an agent, a phi-rx tool): a tool's metadata for
 * `tools/list` and a call that streams progress lines, then one result, for `tools/call`.
 */

/** A `tools/call` result as the server sends it. */
export interface McpToolResult {
  content: McpContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

/** One emission of a served call: a progress line (an MCP progress notification), or the call's result. */
export type ServedEmission = { readonly progress: string } | { readonly result: McpToolResult };

/** What the server gives one call: the client's cancellation and the way to ask the client's user. */
export interface ServedCall {
  /** The request's id, as a string (phi-rx's tool call id for the call). */
  readonly requestId: string;
  /** Aborted when the client cancels the call (`notifications/cancelled`) or the connection ends. */
  readonly signal: AbortSignal;
  /**
   * Asks the client's user to approve a tool call (MCP elicitation). Rejects, saying why, when the
   * client cannot ask (no elicitation capability) or the request fails. `signal` withdraws the
   * question (the call was decided otherwise): the client is told to close it.
   */
  approve(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalDecision>;
}

/** A served tool: what `tools/list` says of it, and what a `tools/call` of it does. */
export interface ServedTool {
  readonly info: McpToolInfo & { outputSchema?: McpToolInfo['inputSchema'] };
  /** Never errors: a failure is a result with `isError`. Unsubscribing stops the call. */
  call(args: Record<string, unknown>, call: ServedCall): Observable<ServedEmission>;
}

/** An error result the client shows (and a calling model reads). */
export function errorToolResult(text: string): McpToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** A phi-rx tool result as MCP content: text and images as they are. */
export function toMcpResult(result: ToolResult, isError: boolean): McpToolResult {
  const content: McpContentBlock[] = result.content.map((c) => (c.type === 'text' ? { type: 'text', text: c.text } : { type: 'image', data: c.data, mimeType: c.mimeType }));
  return isError ? { content, isError: true } : { content };
}

/** The text of a partial result, for a progress line. */
export function partialText(result: ToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
}
