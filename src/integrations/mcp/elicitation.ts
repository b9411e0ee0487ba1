import type { ApprovalDecision, ApprovalRequest } from '../../operators/request-approval.js';
import type { HookResult } from '../../types/hooks.js';

/*
 * Tool approval as MCP elicitation, both ways. A served tool call that needs approval asks the
 * client's user with a small form (approve: yes / no, and a reason); a phi-rx client answers any
 * server's form through the same decision shape its approvals use.
 */

/** The form a served tool call's approval asks for: `approved` (required) and a `reason`. */
export const APPROVAL_FORM = {
  type: 'object' as const,
  properties: {
    approved: { type: 'boolean' as const, title: 'Approve', description: 'Run this tool call?' },
    reason: { type: 'string' as const, title: 'Reason', description: 'Why not (the agent reads it)' },
  },
  required: ['approved'],
};

/** The longest arguments text an approval message quotes; longer ones are cut with a note. */
const MAX_ARGS_TEXT = 2000;

/** What an MCP client shows its user for a call waiting for approval. */
export function approvalMessage(request: ApprovalRequest, server: string): string {
  let args = JSON.stringify(request.args) ?? '{}';
  if (args.length > MAX_ARGS_TEXT) args = `${args.slice(0, MAX_ARGS_TEXT)}… (${args.length} characters in all)`;
  return `${server} asks to run the tool "${request.toolName}" with the arguments ${args}. Approve?`;
}

/** An `elicitation/create` answer (accept with content, decline, cancel), as an MCP client sends it. */
export interface McpElicitationAnswer {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
}

/** The decision an answer to {@link APPROVAL_FORM} gives: accept with `approved: true` approves; anything else denies, saying why. */
export function decisionOf(answer: McpElicitationAnswer): ApprovalDecision {
  if (answer.action === 'decline') return { approved: false, reason: 'the user declined' };
  if (answer.action === 'cancel') return { approved: false, reason: 'the user dismissed the approval request' };
  const reason = typeof answer.content?.['reason'] === 'string' && answer.content['reason'] !== '' ? answer.content['reason'] : undefined;
  if (answer.content?.['approved'] === true) return reason === undefined ? { approved: true } : { approved: true, reason };
  return { approved: false, reason: reason ?? 'the user denied it' };
}

/** A form's JSON Schema, as `elicitation/create` carries it: flat, one primitive per property. */
export interface McpElicitationSchema {
  type: 'object';
  properties: Record<string, { type?: string; [key: string]: unknown }>;
  required?: string[];
  [key: string]: unknown;
}

/**
 * The answer a phi-rx client sends for an approval decision: approving accepts with the decision's
 * `args` as the form's content; denying declines. A form that asks for `approved` (a phi-rx server's
 * approval, or any form with that boolean) is accepted either way, with `approved` and `reason` filled
 * in, so that a denial's reason reaches the server.
 */
export function answerOf(decision: ApprovalDecision, schema: McpElicitationSchema): McpElicitationAnswer {
  const content: Record<string, unknown> = { ...decision.args };
  const asksApproval = schema.properties['approved']?.type === 'boolean';
  if (asksApproval) {
    content['approved'] ??= decision.approved;
    if (decision.reason !== undefined && schema.properties['reason']?.type === 'string') content['reason'] ??= decision.reason;
    return { action: 'accept', content };
  }
  return decision.approved ? { action: 'accept', content } : { action: 'decline' };
}

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
