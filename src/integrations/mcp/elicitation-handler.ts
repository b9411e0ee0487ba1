import { firstValueFrom } from 'rxjs';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { ApprovalDecision, ApprovalRequest } from '../../operators/request-approval.js';
import { fromHookResult } from '../../sources/hook-result.js';
import { errorMessage } from '../../types/errors.js';
import type { HookResult } from '../../types/hooks.js';
import { answerOf, type McpElicitationSchema } from './elicitation.js';

/**
 * A server's question to the user (MCP elicitation), shown as an approval request: the phi-rx tool
 * call it came during (`loopId`, `toolCallId`, `toolName`, `args`; empty strings when no call of this
 * connection was running), the server, its message and the form it asks to fill in.
 */
export interface McpElicitation extends ApprovalRequest {
  server: string;
  message: string;
  requestedSchema: McpElicitationSchema;
}

/**
 * Answers a server's elicitation as an approval is answered: `{ approved: true, args }` accepts with
 * `args` as the form's content, `{ approved: false, reason }` declines (a form asking for `approved`,
 * as a phi-rx server's approval does, gets `approved: false` and the reason). A value, Promise or Observable.
 */
export type McpElicitationHandler = (request: McpElicitation) => HookResult<ApprovalDecision>;

/** A phi-rx tool call running on a session: what an elicitation arriving now is about. */
export interface ActiveCall extends ApprovalRequest {
  /** Shows a line on the call (a ProgressMessage event in the run). */
  progress(text: string): void;
}

/** The calls running on one session, in start order: an elicitation is put to the newest. */
export class ActiveCalls {
  private readonly calls = new Set<ActiveCall>();

  /** Tracks `call` until the returned function is called. */
  add(call: ActiveCall): () => void {
    this.calls.add(call);
    return () => this.calls.delete(call);
  }

  newest(): ActiveCall | undefined {
    let last: ActiveCall | undefined;
    for (const call of this.calls) last = call;
    return last;
  }
}

/**
 * The SDK request handler for `elicitation/create`: shows the question on the running call, asks
 * `handler`, and answers with its decision. A handler that fails (or gives no answer) denies, saying
 * why. URL elicitation is declined: the client declares forms only.
 */
export function elicitationHandler(handler: McpElicitationHandler, calls: ActiveCalls, server: () => string): (request: ElicitRequest) => Promise<ElicitResult> {
  return async (request) => {
    const params = request.params;
    if (params.mode === 'url') return { action: 'decline' };
    const call = calls.newest();
    call?.progress(`waiting for an answer: ${params.message}`);
    const elicitation: McpElicitation = {
      loopId: call?.loopId ?? '',
      toolCallId: call?.toolCallId ?? '',
      toolName: call?.toolName ?? '',
      args: call?.args ?? {},
      server: server(),
      message: params.message,
      requestedSchema: params.requestedSchema as McpElicitationSchema,
    };
    let decision: ApprovalDecision;
    try {
      decision = (await firstValueFrom(fromHookResult(handler(elicitation)), { defaultValue: undefined })) ?? { approved: false, reason: 'no answer was given' };
    } catch (e) {
      decision = { approved: false, reason: `the elicitation handler failed: ${errorMessage(e)}` };
    }
    return answerOf(decision, elicitation.requestedSchema) as ElicitResult;
  };
}
