import { asyncScheduler, catchError, defer, from, map, of, switchMap, type Observable } from 'rxjs';
import type { ApprovalDecision } from '../../operators/request-approval.js';
import { needsApproval } from '../../operators/request-approval.js';
import { runTool } from '../../sources/tool-run.js';
import { errorMessage } from '../../types/errors.js';
import type { AnyTool } from '../../types/tool.js';
import type { McpToolInfo } from './types.js';
import { errorToolResult, partialText, toMcpResult, type ServedCall, type ServedEmission, type ServedTool } from './served-tool.js';

/**
 * A phi-rx tool as a served MCP tool: its JSON Schema as the input schema, its arguments checked by
 * its `validate`, its updates and progress lines as progress, its result (an `isError` one too) as
 * the call's result. A tool that `needsApproval` asks the client's user first (MCP elicitation).
 *
 * ```
 * client:   call-------------cancel
 * tool:     --u--p--r|                (u: update, p: progress, r: result)
 * served:   --P--P--R|                (P: progress lines, R: the result)
 * ```
 *
 * @example
 * const served = toolAsMcp(defineTool({ name: 'add', ... }));
 */
export function toolAsMcp(tool: AnyTool): ServedTool {
  const inputSchema = inputSchemaOf(tool);
  const info = { name: tool.name, title: tool.label, description: tool.description, inputSchema };
  return {
    info,
    call: (args, call) =>
      defer(() => {
        const checked = tool.validate ? tool.validate(args) : { ok: true as const, value: args };
        if (!checked.ok) return of({ result: errorToolResult(`Invalid arguments for ${tool.name}: ${checked.error}`) });
        const asks = needsApproval({ type: 'toolCall', id: call.requestId, name: tool.name, arguments: args }, tool, undefined, () => undefined, checked.value);
        if (!asks) return execute(tool, checked.value, call);
        return approval(tool, args, call).pipe(
          switchMap((decision) =>
            decision.approved
              ? execute(tool, checked.value, call)
              : of({ result: errorToolResult(`The call of ${tool.name} was not approved: ${decision.reason ?? 'denied'}`) }),
          ),
        );
      }),
  };
}

/** The client's user's decision; a client that cannot ask denies, saying why. */
function approval(tool: AnyTool, args: Record<string, unknown>, call: ServedCall): Observable<ApprovalDecision> {
  return from(call.approve({ loopId: 'mcp', toolCallId: call.requestId, toolName: tool.name, args })).pipe(
    catchError((e: unknown) => of({ approved: false, reason: errorMessage(e) })),
  );
}

function execute(tool: AnyTool, args: unknown, call: ServedCall): Observable<ServedEmission> {
  const options = { toolCallId: call.requestId, loopId: 'mcp', scheduler: asyncScheduler, signal: call.signal, ...(tool.timeoutMs !== undefined ? { timeoutMs: tool.timeoutMs } : {}) };
  return runTool(tool, args, options).pipe(
    map((e): ServedEmission => (e.kind === 'result' ? { result: toMcpResult(e.result, e.isError) } : { progress: e.kind === 'progress' ? e.text : partialText(e.partial) })),
  );
}

/** The tool's parameters as an MCP input schema, which must describe an object. */
function inputSchemaOf(tool: AnyTool): McpToolInfo['inputSchema'] {
  const schema = tool.parameters;
  const type = schema['type'];
  if (type !== undefined && type !== 'object') {
    throw new TypeError(`serveMcp: tool "${tool.name}": an MCP tool's input schema must be of type "object", got ${JSON.stringify(type)}`);
  }
  return { ...schema, type: 'object' };
}
