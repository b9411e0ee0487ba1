import { defer, from, merge, type Observable, Subject } from 'rxjs';
import { Broadcast } from '../sources/broadcast.js';
import type { AgentEvent } from '../types/events.js';
import type { AnyTool } from '../types/tool.js';
import { toolCallsOf } from '../types/message.js';
import { AgentError } from '../types/errors.js';
import type { ApprovalAnswer, ApprovalDecision, ToolApprovalConfig } from '../operators/request-approval.js';
import type { ToolCallCancel } from '../operators/internal/call-cancellations.js';
import type { AgentLoopConfig } from '../loop/config.js';
import { reachableTools } from '../loop/handoff-team.js';
import type { SessionRecorder } from '../session/recorder.js';

export type { ApprovalDecision };

/** A call waiting for approval, as `agent.pendingApprovals()` lists it. */
export interface PendingApproval {
  loopId: string;
  toolCallId: string;
  toolName: string;
  args: Record<string, unknown>;
  /** When the ToolApprovalRequested event was emitted. */
  requestedAt: number;
}

/** Where `approve` sent the answer: to the active run, or to a restored run that must be resumed. */
export type ApprovalRoute = 'active' | 'resume';

/**
 * BasicAgent's handles on its running calls: which calls wait for approval (from the events it
 * sees), the answers and cancellations it feeds the loop, and what a restored agent must resume.
 * One per agent; it only reads events, so it costs nothing while no tool needs approval.
 */
export class RunControls {
  // Broadcasts, not Subjects: a run listens with a plain callback (no Subscriber per dispatch), and nothing is kept until it does.
  private readonly answers = new Broadcast<ApprovalAnswer>();
  private readonly cancels = new Broadcast<ToolCallCancel>();
  // Made on first use (most agents never ask for an approval): an idle agent is a few hundred bytes smaller.
  private pending: Map<string, PendingApproval> | undefined;
  /** Calls of the active run's assistant messages: `true` once finished. */
  private readonly calls = new Map<string, boolean>();
  /** Answers given to a restored agent before the run that needs them resumes. */
  private early: Map<string, ApprovalDecision> | undefined;
  /** The branches of the active `promptParallel` run, and which have ended. */
  private branches: { loopIds: readonly string[]; ended: Set<string>; cancel: Subject<{ branch: number; reason?: string }> } | undefined;

  /** Follows one event of the agent's runs (and records it into the agent's session). */
  observe(event: AgentEvent, recorder: SessionRecorder): void {
    recorder.onEvent(event);
    switch (event.type) {
      case 'AgentStart':
        // A new run (or the first branch of a parallel one): forget the finished calls of the runs before.
        if (this.calls.size > 0 && !hasOpen(this.calls)) this.calls.clear();
        return;
      case 'MessageEnd':
        if (event.message.role === 'assistant') for (const c of toolCallsOf(event.message)) this.calls.set(c.id, false);
        return;
      case 'ToolApprovalRequested':
        this.calls.set(event.toolCallId, false);
        (this.pending ??= new Map()).set(event.toolCallId, {
          loopId: event.loopId, toolCallId: event.toolCallId, toolName: event.toolName, args: event.args, requestedAt: event.timestamp,
        });
        return;
      case 'ToolApprovalResolved':
        this.pending?.delete(event.toolCallId);
        this.early?.delete(event.toolCallId);
        return;
      case 'ToolExecutionEnd':
        this.calls.set(event.toolCallId, true);
        this.pending?.delete(event.toolCallId);
        return;
      case 'AgentEnd':
        this.branches?.ended.add(event.loopId);
        return;
      case 'ParallelLoopEnd':
        this.branches = undefined;
        return;
      default:
        return;
    }
  }

  /** Calls waiting for approval, oldest first. */
  list(): PendingApproval[] {
    return this.pending ? [...this.pending.values()] : [];
  }

  /** Takes on what a restored session left waiting; `approve` then resumes the run. */
  adopt(pending: readonly PendingApproval[]): void {
    this.pending = pending.length > 0 ? new Map(pending.map((p) => [p.toolCallId, p])) : undefined;
    this.calls.clear();
    this.early = undefined;
  }

  /**
   * Routes an answer: to the active run's waiting call, or — for a call a restored session left
   * waiting — kept for the resumed run. Throws AgentError('UnknownToolCall') for an id that is
   * not waiting, and ('InvalidApproval') for a malformed decision.
   */
  approve(toolCallId: string, decision: ApprovalDecision, running: boolean): ApprovalRoute {
    checkDecision(toolCallId, decision);
    if (this.pending?.has(toolCallId) !== true) {
      const waiting = this.pending ? [...this.pending.keys()] : [];
      throw new AgentError(
        'UnknownToolCall',
        `approve("${toolCallId}"): no tool call with this id is waiting for approval (${waiting.length ? `waiting: ${waiting.join(', ')}` : 'none is waiting'}).`,
      );
    }
    // Kept until the call is resolved: a run that asks for this call only later (a resumed run,
    // sequential dispatch) gets it when it asks.
    (this.early ??= new Map()).set(toolCallId, decision);
    if (!running) return 'resume';
    this.answers.next({ toolCallId, ...decision });
    return 'active';
  }

  /**
   * Cancels one call of the active run. Returns false (a no-op) for a call that has already
   * finished; throws AgentError('UnknownToolCall') for an id the active run never had, or when no
   * run is active.
   */
  cancel(toolCallId: string, reason: string | undefined, running: boolean): boolean {
    const finished = this.calls.get(toolCallId);
    if (!running || finished === undefined) {
      throw new AgentError('UnknownToolCall', `cancelToolCall("${toolCallId}"): ${running ? 'the active run has no tool call with this id' : 'no run is active'}.`);
    }
    if (finished) return false;
    this.cancels.next({ toolCallId, ...(reason !== undefined ? { reason } : {}) });
    return true;
  }

  /** Starts following a `promptParallel` run's branches; the returned source goes to `cancelBranches`. */
  parallel(loopIds: readonly string[]): Observable<{ branch: number; reason?: string }> {
    const cancel = new Subject<{ branch: number; reason?: string }>();
    this.branches = { loopIds, ended: new Set(), cancel };
    return cancel;
  }

  /**
   * Cancels one branch of the active parallel run, by config index or loop id. False (a no-op)
   * for a branch that has already ended; AgentError('UnknownBranch') for a key that names no
   * branch, or when no parallel run is active.
   */
  cancelBranch(key: number | string, reason: string | undefined, running: boolean): boolean {
    const b = running ? this.branches : undefined;
    const index = b === undefined ? -1 : typeof key === 'number' ? (Number.isInteger(key) && key >= 0 && key < b.loopIds.length ? key : -1) : b.loopIds.indexOf(key);
    if (!b || index < 0) {
      const known = b ? `branches: 0..${b.loopIds.length - 1} or ${b.loopIds.join(', ')}` : 'no parallel run is active';
      throw new AgentError('UnknownBranch', `cancelBranch(${JSON.stringify(key)}): no such branch (${known}).`);
    }
    if (b.ended.has(b.loopIds[index]!)) return false;
    b.cancel.next({ branch: index, ...(reason !== undefined ? { reason } : {}) });
    return true;
  }

  /**
   * The approval and cancellation wiring of a run's config: the agent's answers merged with the
   * user's own `approval`, when any tool or the config asks for approval (otherwise the loop keeps
   * its no-approval fast path), and the agent's cancellations merged with the user's.
   */
  wire(config: AgentLoopConfig, tools: readonly AnyTool[]): Pick<AgentLoopConfig, 'approval' | 'cancelToolCalls'> {
    const own = config.approval;
    // The tools of the agents its handoffs and agent tools reach ask through this channel too.
    const asks = own !== undefined || reachableTools(tools).some((t) => t.needsApproval !== undefined && t.needsApproval !== false);
    const cancels = this.cancels.asObservable();
    const cancelToolCalls = config.cancelToolCalls ? merge(cancels, config.cancelToolCalls) : cancels;
    if (!asks) return { cancelToolCalls };
    const early$ = defer(() => from([...(this.early ?? [])].map(([toolCallId, d]) => ({ toolCallId, ...d }))));
    const answers: Observable<ApprovalAnswer> = merge(early$, this.answers.asObservable(), ...(own?.answers ? [own.answers] : []));
    const approval: ToolApprovalConfig = { ...own, answers };
    return { approval, cancelToolCalls };
  }
}

function hasOpen(calls: ReadonlyMap<string, boolean>): boolean {
  for (const finished of calls.values()) if (!finished) return true;
  return false;
}

function checkDecision(toolCallId: string, decision: ApprovalDecision): void {
  const at = `approve("${toolCallId}", …)`;
  if (decision === null || typeof decision !== 'object') throw new AgentError('InvalidApproval', `${at}: expected { approved, args?, reason? }, got ${decision === null ? 'null' : typeof decision}`);
  if (typeof decision.approved !== 'boolean') throw new AgentError('InvalidApproval', `${at}: approved must be true or false, got ${typeof decision.approved}`);
  if (decision.args !== undefined && (decision.args === null || typeof decision.args !== 'object' || Array.isArray(decision.args))) {
    throw new AgentError('InvalidApproval', `${at}: args must be an object of arguments`);
  }
  if (decision.reason !== undefined && typeof decision.reason !== 'string') throw new AgentError('InvalidApproval', `${at}: reason must be a string`);
}
