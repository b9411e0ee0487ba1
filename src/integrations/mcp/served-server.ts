import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ElicitResultSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, ClientCapabilities, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ApprovalDecision, ApprovalRequest } from '../../operators/request-approval.js';
import { errorMessage } from '../../types/errors.js';
import { APPROVAL_FORM, approvalMessage, decisionOf } from './elicitation.js';
import { errorToolResult, type McpToolResult, type ServedCall, type ServedTool } from './served-tool.js';

/** How long a served call waits for the client's user to answer an approval, by default (10 minutes). */
export const DEFAULT_ELICITATION_TIMEOUT_MS = 600_000;

export interface ServedServerOptions {
  name: string;
  version: string;
  instructions?: string;
  elicitationTimeoutMs?: number;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * An SDK `Server` (one per client session) serving `tools`: `tools/list` lists them, `tools/call`
 * runs one, sending its progress lines as progress notifications when the client asked for them
 * (a `progressToken`), and answers with its result. The client's cancel aborts the call's signal.
 */
export function servedServer(tools: ReadonlyMap<string, ServedTool>, options: ServedServerOptions): Server {
  const server = new Server(
    { name: options.name, version: options.version },
    { capabilities: { tools: {} }, ...(options.instructions !== undefined ? { instructions: options.instructions } : {}) },
  );
  const list = [...tools.values()].map((t) => t.info);
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: list }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const { name, arguments: args } = request.params;
    const tool = tools.get(name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool "${name}"; this server has: ${[...tools.keys()].join(', ')}`);
    const progress = progressSender(extra, request.params._meta?.progressToken);
    return callTool(tool, args ?? {}, servedCall(server, extra, options), progress.send).then(async (result) => {
      await progress.sent();
      return result;
    });
  });
  return server;
}

/** Runs one call to its result; progress lines go to `progress`. Waits for the call to end (an aborted agent run ends too). */
function callTool(tool: ServedTool, args: Record<string, unknown>, call: ServedCall, progress: (line: string) => void): Promise<CallToolResult> {
  return new Promise((resolve) => {
    let result: McpToolResult | undefined;
    tool.call(args, call).subscribe({
      next: (e) => ('progress' in e ? progress(e.progress) : (result ??= e.result)),
      error: (e: unknown) => resolve(errorToolResult(`${tool.info.name} failed: ${errorMessage(e)}`) as CallToolResult),
      complete: () => resolve((result ?? errorToolResult(`${tool.info.name} ended without a result`)) as CallToolResult),
    });
  });
}

/**
 * Sends `notifications/progress` for the call's token, counting up; nothing when the client sent no token.
 * `sent()` settles once the last one is written and a macrotask has passed: the SDK's client handles a notification a
 * microtask late and forgets the token when the response arrives, so progress read together with the response is lost.
 */
function progressSender(extra: Extra, token: string | number | undefined): { send: (line: string) => void; sent: () => Promise<void> } {
  let progress = 0;
  let last: Promise<unknown> = Promise.resolve();
  const send = (message: string): void => {
    if (token === undefined || extra.signal.aborted) return;
    last = extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: ++progress, message } }).catch(() => undefined);
  };
  const sent = async (): Promise<void> => {
    if (progress === 0) return;
    await last;
    await new Promise((resolve) => setTimeout(resolve, 0));
  };
  return { send, sent };
}

function servedCall(server: Server, extra: Extra, options: ServedServerOptions): ServedCall {
  return {
    requestId: String(extra.requestId),
    signal: extra.signal,
    approve: (request, signal) => askApproval(server, extra, request, options, signal),
  };
}

/** Asks the client's user (elicitation, on the call's own stream); refuses, saying why, when the client cannot ask. */
async function askApproval(server: Server, extra: Extra, request: ApprovalRequest, options: ServedServerOptions, withdrawn?: AbortSignal): Promise<ApprovalDecision> {
  if (!supportsForms(server.getClientCapabilities())) {
    const client = server.getClientVersion()?.name ?? 'the client';
    throw new Error(`the tool call needs approval, and the MCP client ${JSON.stringify(client)} does not support elicitation, so its user cannot be asked; the call was not run`);
  }
  const answer = await extra.sendRequest(
    { method: 'elicitation/create', params: { mode: 'form', message: approvalMessage(request, options.name), requestedSchema: APPROVAL_FORM } },
    ElicitResultSchema,
    { signal: withdrawn ? eitherSignal(extra.signal, withdrawn) : extra.signal, timeout: options.elicitationTimeoutMs ?? DEFAULT_ELICITATION_TIMEOUT_MS },
  );
  return decisionOf(answer);
}

/** Form elicitation: declared as `{ form }`, or as `{}` (clients of the spec before modes). */
function supportsForms(capabilities: ClientCapabilities | undefined): boolean {
  const elicitation = capabilities?.elicitation;
  if (elicitation === undefined) return false;
  return elicitation.form !== undefined || elicitation.url === undefined;
}

/** Aborts when either aborts (held strongly, unlike a dependent signal of `AbortSignal.any`). */
function eitherSignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  const controller = new AbortController();
  const abort = (signal: AbortSignal) => () => controller.abort(signal.reason);
  if (a.aborted) controller.abort(a.reason);
  else if (b.aborted) controller.abort(b.reason);
  else {
    a.addEventListener('abort', abort(a), { once: true });
    b.addEventListener('abort', abort(b), { once: true });
  }
  return controller.signal;
}
