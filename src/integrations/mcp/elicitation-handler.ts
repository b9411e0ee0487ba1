import { firstValueFrom } from 'rxjs';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { ApprovalDecision, ApprovalRequest } from '../../operators/request-approval.js';
import { fromHookResult } from '../../sources/hook-result.js';
import { errorMessage } from '../../types/errors.js';
import { answerOf, type McpElicitation, type McpElicitationHandler, type McpElicitationSchema } from './elicitation.js';

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
