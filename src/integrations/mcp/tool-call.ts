import { Observable } from 'rxjs';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import type { McpToolInfo } from './types.js';
import { toolProgress } from '../../types/tool.js';
import type { JsonSchema, ToolContext, ToolEmission, ToolResult } from '../../types/tool.js';
import { toToolResult } from './content.js';
import type { McpCallResult } from './content.js';
import type { Session } from './session.js';

/* Call handling of an MCP connection: one `tools/call` on a session, and the results it makes. */

/** The SDK's own request timer is left idle (2^31-1 ms) so that our scheduler-driven one decides. */
const SDK_TIMEOUT_DISABLED = 2_147_483_647;

/**
 * `tools/call` as an Observable: progress notifications as they arrive, then the result. While it
 * runs, the call is the session's active one: a server's elicitation is shown on it.
 */
export function requestTool(session: Session, name: string, args: Record<string, unknown>, ctx: ToolContext): Observable<ToolEmission> {
  return new Observable<ToolEmission>((subscriber) => {
    const signal = ctx.signal;
    const controller = new AbortController();
    const progress = session.progress.register((p) => subscriber.next(toolProgress(describeProgress(p))));
    const untrack = session.calls.add({
      loopId: ctx.loopId, toolCallId: ctx.toolCallId, toolName: ctx.toolName, args,
      progress: (text) => subscriber.next(toolProgress(text)),
    });
    let settled = false;
    const forwardAbort = () => controller.abort(signal.reason);
    if (signal.aborted) forwardAbort();
    else signal.addEventListener('abort', forwardAbort, { once: true });
    session.client
      .callTool({ name, arguments: args, _meta: { progressToken: progress.token } }, undefined, {
        signal: controller.signal,
        timeout: SDK_TIMEOUT_DISABLED,
      })
      .then(
        (result) => {
          settled = true;
          subscriber.next(toToolResult(result as McpCallResult));
          subscriber.complete();
        },
        (error: unknown) => {
          settled = true;
          subscriber.error(error);
        },
      );
    return () => {
      untrack();
      progress.unregister();
      signal.removeEventListener('abort', forwardAbort);
      // Only an unfinished request is cancelled; the SDK would otherwise notify the server about a finished one.
      if (!settled) controller.abort(new Error('tool call no longer awaited'));
    };
  });
}

function describeProgress(progress: Progress): string {
  const amount = progress.total === undefined ? `${progress.progress}` : `${progress.progress}/${progress.total}`;
  return progress.message ? `${progress.message} (${amount})` : `progress ${amount}`;
}

export function errorResult(text: string, details?: Record<string, unknown>): ToolResult {
  const result: ToolResult = { content: [{ type: 'text', text }], isError: true };
  if (details) result.details = details;
  return result;
}

/** The server's input schema minus `$schema`, which some providers reject. */
export function toolParameters(schema: McpToolInfo['inputSchema']): JsonSchema {
  const { $schema: _dropped, ...rest } = schema as JsonSchema;
  return { ...rest, type: 'object' };
}
