import { asyncScheduler, concat, concatMap, defaultIfEmpty, EMPTY, filter, from, map, merge, mergeMap, Observable, of, type OperatorFunction, type SchedulerLike, take } from 'rxjs';
import type { ToolCall } from '../types/content.js';
import type { AgentEvent } from '../types/events.js';
import type { HookResult } from '../types/hooks.js';
import type { AnyTool } from '../types/tool.js';
import { errorMessage } from '../types/errors.js';
import { callHookSafely } from '../sources/hook-result.js';
import { onAbort } from '../sources/cancellation.js';
import { cancelledText, TOOL_TEXTS } from '../sources/tool-run.js';

/** A person's (or a policy's) answer to a call waiting for approval. */
export interface ApprovalDecision {
  approved: boolean;
  /**
   * Run with these arguments instead: only where edits are allowed (`allowEdits` on the tool or the
   * approval config; else the call is denied), checked by the tool's `validate` and decided again
   * by `decide` (an invalid or refused edit denies the call, saying why).
   */
  args?: Record<string, unknown>;
  /** Why: a denial's reason is what the model reads in the error result. */
  reason?: string;
}

/** An answer addressed to one call, as an `answers` stream carries it. */
export interface ApprovalAnswer extends ApprovalDecision {
  toolCallId: string;
}

/** What a call waiting for approval shows whoever decides (the ToolApprovalRequested event's fields). */
export interface ApprovalRequest {
  loopId: string;
  toolCallId: string;
  toolName: string;
  args: Record<string, unknown>;
}

/**
 * Human in the loop, as the loop's `approval` config. A call waits for approval when its tool
 * says `needsApproval` or `needs(call, tool)` says so. The answer is the first of: `decide`'s
 * (a value, Promise or Observable; `undefined` means "not mine, wait for `answers`"), an answer
 * for the call's id on `answers`, or the end of the wait (abort, a cancelled call).
 */
export interface ToolApprovalConfig {
  /** Calls that wait for approval beyond those whose tool says `needsApproval`. */
  needs?(call: ToolCall, tool: AnyTool | undefined): boolean;
  /** Decides a request. A throw (or a failed Promise / Observable) denies the call and is reported as HookError. */
  decide?(request: ApprovalRequest): HookResult<ApprovalDecision | void>;
  /** Answers as they come (a UI's clicks): the first for a waiting call's id decides it; others are ignored. */
  answers?: Observable<ApprovalAnswer>;
  /**
   * Whether an approval may change a call's arguments (`approve(id, { approved: true, args })`):
   * off by default, so that whoever approves cannot run a command the model never asked for; a
   * tool's own `allowEdits: true` allows it for that tool. A predicate that throws says no.
   */
  allowEdits?: boolean | ((request: ApprovalRequest) => boolean);
}

/** How a wait for approval ended: approved (with the arguments to run), denied, aborted or cancelled. */
export type ApprovalVerdict =
  | { type: 'ApprovalVerdict'; call: ToolCall; outcome: 'approved'; args: Record<string, unknown>; reason?: string }
  | { type: 'ApprovalVerdict'; call: ToolCall; outcome: 'denied' | 'aborted' | 'cancelled'; reason?: string };

export interface RequestApprovalOptions extends ToolApprovalConfig {
  loopId: string;
  scheduler?: SchedulerLike;
  now?(): number;
  /** The run's signal: an abort ends every wait (`aborted`). */
  signal?: AbortSignal;
  /** A call's cancellations (its id's, with the reason): one ends its wait (`cancelled`). */
  cancelOf?(toolCallId: string): Observable<string | undefined>;
  /** The tool of the calls (its `allowEdits` and `validate` judge edited arguments); `approvalGate` sets it. */
  tool?: AnyTool;
}

export const isApprovalVerdict = (value: AgentEvent | ApprovalVerdict): value is ApprovalVerdict => value.type === 'ApprovalVerdict';

/**
 * Asks for approval of each call and waits for the answer, calls independently of each other:
 * emits ToolApprovalRequested, then (when decided) ToolApprovalResolved and the verdict for the
 * dispatcher. The answer sources are subscribed before the request is announced, so an answer
 * given from an event handler of ToolApprovalRequested is never missed. A wait ends with the run's
 * abort (`aborted`) or the call's cancellation (`cancelled`) too, so no wait outlives its run.
 *
 * ```
 * calls:    a-b|
 * answers:  -z---b---a         z: for another id (ignored), b: b denied, a: a approved
 * requestApproval({ loopId, answers })
 * output:   V-V--(vD)(vA|)     V: Requested, v: Resolved, D / A: the verdicts
 * ```
 *
 * @example
 * from(calls).pipe(requestApproval({ loopId, decide: (r) => ({ approved: r.toolName !== 'rm' }) }))
 *   .subscribe((out) => isApprovalVerdict(out) && console.log(out.call.id, out.outcome));
 */
export function requestApproval(options: RequestApprovalOptions): OperatorFunction<ToolCall, AgentEvent | ApprovalVerdict> {
  const now = options.now ?? (() => (options.scheduler ?? asyncScheduler).now());
  return mergeMap((call) => awaitDecision(call, options, now));
}

/**
 * Whether a call must wait: the tool's `needsApproval` (a predicate gets `args`, the arguments as the
 * tool's schema gave them back; the call's own by default), then the config's `needs`. A predicate that throws says yes.
 */
export function needsApproval(
  call: ToolCall, tool: AnyTool | undefined, config: ToolApprovalConfig | undefined, onError: (e: unknown) => void, args: unknown = call.arguments,
): boolean {
  try {
    const own = tool?.needsApproval;
    if (own === true || (typeof own === 'function' && own(args, call))) return true;
    return config?.needs?.(call, tool) === true;
  } catch (e) {
    onError(e);
    return true;
  }
}

function awaitDecision(call: ToolCall, o: RequestApprovalOptions, now: () => number): Observable<AgentEvent | ApprovalVerdict> {
  return new Observable<AgentEvent | ApprovalVerdict>((subscriber) => {
    const request: ApprovalRequest = { loopId: o.loopId, toolCallId: call.id, toolName: call.name, args: call.arguments };
    const hookErrors: AgentEvent[] = [];
    const decide = o.decide;
    let decisionFailed: string | undefined;
    const decided$ = decide
      ? callHookSafely<ApprovalDecision | undefined>(() => decide(request), undefined, (e) => {
          hookErrors.push({ type: 'HookError', loopId: o.loopId, hook: 'approval.decide', message: errorMessage(e), timestamp: now() });
          decisionFailed = errorMessage(e);
        }).pipe(
          map((d) => (decisionFailed !== undefined ? { approved: false, reason: `the approval function failed: ${decisionFailed}` } : d)),
          filter((d): d is ApprovalDecision => d !== undefined),
        )
      : EMPTY;
    const answered$ = o.answers ? o.answers.pipe(filter((a) => a.toolCallId === call.id)) : EMPTY;
    const aborted$ = o.signal
      ? new Observable<ApprovalVerdict>((sub) => onAbort(o.signal!, () => sub.next({ type: 'ApprovalVerdict', call, outcome: 'aborted', reason: 'the run was aborted' })))
      : EMPTY;
    const cancelled$ = o.cancelOf
      ? o.cancelOf(call.id).pipe(map((reason): ApprovalVerdict => ({ type: 'ApprovalVerdict', call, outcome: 'cancelled', ...(reason ? { reason } : {}) })))
      : EMPTY;
    let announced = false;
    let early: ApprovalVerdict | undefined;
    const settle = (verdict: ApprovalVerdict): void => {
      for (const e of hookErrors.splice(0)) subscriber.next(e);
      subscriber.next(resolvedEvent(o.loopId, verdict, now()));
      subscriber.next(verdict);
      subscriber.complete();
    };
    const onEditHookError = (e: unknown) => hookErrors.push({ type: 'HookError', loopId: o.loopId, hook: 'approval.decide', message: errorMessage(e), timestamp: now() });
    const reviewed$ = merge(decided$, answered$).pipe(take(1), concatMap((d) => reviewEdits(call, d, o, request, onEditHookError)));
    const verdict$ = merge(aborted$, cancelled$, reviewed$).pipe(take(1));
    const subscription = verdict$.subscribe((verdict) => (announced ? settle(verdict) : (early = verdict)));
    if (o.signal?.aborted && !early) early = { type: 'ApprovalVerdict', call, outcome: 'aborted', reason: 'the run was aborted' };
    announced = true;
    subscriber.next({ type: 'ToolApprovalRequested', loopId: o.loopId, toolCallId: call.id, toolName: call.name, args: call.arguments, timestamp: now() });
    if (early) settle(early);
    return subscription;
  });
}

/**
 * An approval that changes the call's arguments, judged: denied unless edits are allowed (the
 * tool's `allowEdits`, the config's), denied when the tool's `validate` refuses them, then decided
 * again by `decide` on the edited request (a denial there denies the call). The same arguments
 * pass as they are.
 */
function reviewEdits(call: ToolCall, d: ApprovalDecision, o: RequestApprovalOptions, request: ApprovalRequest, onError: (e: unknown) => void): Observable<ApprovalVerdict> {
  const { args } = d;
  if (d.approved !== true || args === undefined || JSON.stringify(args) === JSON.stringify(call.arguments)) {
    const { args: _same, ...rest } = d;
    return of(verdictOf(call, rest));
  }
  const denied = (reason: string): Observable<ApprovalVerdict> => of({ type: 'ApprovalVerdict', call, outcome: 'denied', reason });
  if (!editsAllowed(o, request)) return denied(`the approval changed the arguments of "${call.name}", which this tool does not allow (allowEdits)`);
  if (o.tool?.validate) {
    const checked = o.tool.validate(args);
    if (!checked.ok) return denied(`the edited arguments are invalid: ${checked.error}`);
  }
  const approved = verdictOf(call, d);
  const decide = o.decide;
  if (!decide) return of(approved);
  return callHookSafely<ApprovalDecision | undefined>(() => decide({ ...request, args }), undefined, onError).pipe(
    take(1),
    map((again): ApprovalVerdict => {
      if (again === undefined || again.approved === true) return approved;
      return { type: 'ApprovalVerdict', call, outcome: 'denied', reason: again.reason ?? 'the approval policy refused the edited arguments' };
    }),
    defaultIfEmpty(approved),
  );
}

function editsAllowed(o: RequestApprovalOptions, request: ApprovalRequest): boolean {
  if (o.tool?.allowEdits === true) return true;
  try {
    return typeof o.allowEdits === 'function' ? o.allowEdits(request) === true : o.allowEdits === true;
  } catch {
    return false;
  }
}

function verdictOf(call: ToolCall, d: ApprovalDecision): ApprovalVerdict {
  if (d.approved === true) return { type: 'ApprovalVerdict', call, outcome: 'approved', args: d.args ?? call.arguments, ...(d.reason !== undefined ? { reason: d.reason } : {}) };
  return { type: 'ApprovalVerdict', call, outcome: 'denied', ...(d.reason !== undefined ? { reason: d.reason } : {}) };
}

function resolvedEvent(loopId: string, v: ApprovalVerdict, timestamp: number): AgentEvent {
  const approved = v.outcome === 'approved';
  const reason = v.outcome === 'approved' || v.outcome === 'denied' ? v.reason : `${v.outcome}${v.reason ? `: ${v.reason}` : ''}`;
  return {
    type: 'ToolApprovalResolved',
    loopId,
    toolCallId: v.call.id,
    toolName: v.call.name,
    approved,
    ...(v.outcome === 'approved' && v.args !== v.call.arguments ? { args: v.args } : {}),
    ...(reason !== undefined ? { reason } : {}),
    timestamp,
  };
}

/** The text of a denied call's error result, which the model reads. */
export function deniedText(toolName: string, reason: string | undefined): string {
  return `Tool call "${toolName}" was denied${reason ? `: ${reason}` : '.'}`;
}

/**
 * The tool dispatcher's approval step for one call: `undefined` when the call needs no approval, else the
 * request, the answer, and then `run` with the approved arguments or `end` with the error text
 * the model reads (denied, aborted, cancelled). A `needsApproval` predicate gets `validArgs` (the
 * arguments as validated); one that throws is reported as HookError and the call waits for approval.
 */
export function approvalGate(
  call: ToolCall,
  tool: AnyTool | undefined,
  options: RequestApprovalOptions,
  next: { run(args: Record<string, unknown>): Observable<AgentEvent>; end(text: string): Observable<AgentEvent> },
  validArgs: unknown = call.arguments,
): Observable<AgentEvent> | undefined {
  const now = options.now ?? (() => (options.scheduler ?? asyncScheduler).now());
  const errors: AgentEvent[] = [];
  const onError = (e: unknown) => errors.push({ type: 'HookError', loopId: options.loopId, hook: 'needsApproval', message: errorMessage(e), timestamp: now() });
  if (!needsApproval(call, tool, options, onError, validArgs)) return undefined;
  return concat(
    from(errors),
    of(call).pipe(
      requestApproval({ ...options, ...(tool ? { tool } : {}) }),
      concatMap((out) => {
        if (!isApprovalVerdict(out)) return of(out);
        if (out.outcome === 'approved') return next.run(out.args);
        if (out.outcome === 'denied') return next.end(deniedText(call.name, out.reason));
        return next.end(out.outcome === 'aborted' ? TOOL_TEXTS.aborted : cancelledText(out.reason));
      }),
    ),
  );
}
