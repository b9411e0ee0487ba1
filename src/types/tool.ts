import type { Observable, SchedulerLike } from 'rxjs';
import type { ToolCall, ToolResultContent } from './content.js';
import type { AgentEvent } from './events.js';
import type { ToolApprovalConfig } from '../operators/request-approval.js';

/** What a tool produced. `details` is for the app, `content` for the model. */
export interface ToolResult {
  content: ToolResultContent[];
  details?: unknown;
  /** Set by tools that ran a child agent loop (sub-agents). */
  childLoopId?: string;
  /** A result the tool itself marks as failed; the model sees it as an error. */
  isError?: boolean;
}

/** A streaming partial result, surfaced as `ToolExecutionUpdate`. */
export interface ToolPartialUpdate {
  kind: 'update';
  partial: ToolResult;
}

/** A user-facing status line, surfaced as `ProgressMessage`. */
export interface ToolProgress {
  kind: 'progress';
  text: string;
}

export type ToolEmission = ToolPartialUpdate | ToolProgress | ToolResult;

export const toolUpdate = (partial: ToolResult | string): ToolPartialUpdate => ({
  kind: 'update',
  partial: typeof partial === 'string' ? { content: [{ type: 'text', text: partial }] } : partial,
});
export const toolProgress = (text: string): ToolProgress => ({ kind: 'progress', text });
export const isFinalToolResult = (e: ToolEmission): e is ToolResult => !('kind' in e);

/** What `execute` may return: a value, a Promise, or an Observable of updates ending in a result. */
export type ToolExecution = ToolResult | string | Promise<ToolResult | string> | Observable<ToolEmission | string>;

export interface ToolContext {
  toolCallId: string;
  toolName: string;
  /** Aborted when the run is aborted, the call times out, steering interrupts it, or the run is unsubscribed. */
  signal: AbortSignal;
  loopId: string;
  scheduler: SchedulerLike;
  /** Push a partial result (same as emitting `toolUpdate` from an Observable). */
  onUpdate(partial: ToolResult | string): void;
  /** Push a status line (same as emitting `toolProgress`). */
  onProgress(text: string): void;
  /**
   * Sends an event of a loop this call started (an `agentTool`'s child run) into the run's stream as
   * it happens; dropped once the call has its result. Set by the loop's tool dispatch (absent in a
   * context made by hand).
   */
  emit?(event: AgentEvent): void;
  /** The run's approval config, for loops this call starts: their calls ask through the same channel. */
  approval?: ToolApprovalConfig;
}

/** JSON Schema object as sent to the model. */
export type JsonSchema = { [key: string]: unknown };

export type ArgsValidation<A> = { ok: true; value: A } | { ok: false; error: string };

export interface Tool<A = Record<string, unknown>> {
  name: string;
  label: string;
  description: string;
  /** JSON Schema of the arguments, sent to the model. */
  parameters: JsonSchema;
  /** Validates raw model arguments before `execute`; failures become invalid-argument results. */
  validate?(args: unknown): ArgsValidation<A>;
  execute(args: A, ctx: ToolContext): ToolExecution;
  /** This tool's own timeout; beats the loop's `toolTimeoutMs`. */
  timeoutMs?: number;
  /**
   * Calls wait for approval before `execute` (a ToolApprovalRequested event; the answer comes from
   * `agent.approve()` or the loop's `approval` config): `true` for every call, or a predicate over
   * the call's arguments as `execute` gets them (validated by the tool's schema). A predicate that
   * throws counts as `true` (reported as HookError).
   */
  needsApproval?: boolean | ApprovalPredicate<A>;
  /**
   * Whether an approval may run this tool with other arguments than the model's (`approve(id,
   * { approved: true, args })`); off by default (or the approval config's `allowEdits`). Edited
   * arguments are checked by `validate` and decided again by the approval config's `decide`.
   */
  allowEdits?: boolean;
}

/**
 * Whether a call must wait for approval, from its arguments as the tool's schema gave them back
 * (what `execute` gets) and the call itself. Typed as a method's parameter (bivariant), so that
 * every `Tool<A>` still fits `AnyTool`.
 */
export type ApprovalPredicate<A> = { check(args: A, call: ToolCall): boolean }['check'];

/**
 * Any tool, whatever its argument type. `execute` is a method, so its parameter is bivariant and
 * every `Tool<A>` fits here without `any`.
 */
export type AnyTool = Tool<unknown>;

/** Schema-only view of a tool for the provider request. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: JsonSchema;
}
