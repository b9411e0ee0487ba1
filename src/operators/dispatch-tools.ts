import {
  bufferCount, concat, concatMap, defer, from, mergeMap, type MonoTypeOperatorFunction, finalize, type Observable, type Observer,
  type OperatorFunction, type SchedulerLike,
} from 'rxjs';
import type { ToolCall } from '../types/content.js';
import type { AgentEvent } from '../types/events.js';
import type { AgentMessage, ToolResultMessage, TurnId } from '../types/message.js';
import type { AnyTool } from '../types/tool.js';
import type { SteeringPolicy, ToolExecutionStrategy } from '../types/config.js';
import type { LoopHooks, PreDispatchPolicy } from '../types/hooks.js';
import { TOOL_TEXTS } from '../sources/tool-run.js';
import type { ToolApprovalConfig } from './request-approval.js';
import type { ToolCallCancel } from './internal/call-cancellations.js';
import { ToolDispatcher } from './internal/tool-dispatcher.js';

/** What dispatch needs to know about steering at its checkpoints. */
export interface SteeringCheck {
  /** Is a steering message waiting? Read at the strategy's checkpoints. */
  pending(): boolean;
  /** The policy in force for what is queued now (per-message policies beat the agent's). */
  policy(): SteeringPolicy;
  /** Fires when a steering message arrives, for `interrupt`. */
  arrivals$: Observable<unknown>;
}

export interface DispatchToolsOptions {
  tools: readonly AnyTool[];
  loopId: string;
  /** The turn the calls belong to: each result message carries it (`turnId`) from its first event on (the loop's tool stage sets it). */
  turnId?: TurnId;
  /** `parallel` (default), `sequential`, or `{ batched: n }`. */
  strategy?: ToolExecutionStrategy;
  /** Per-call timeout; a tool's own `timeoutMs` wins. */
  timeoutMs?: number;
  scheduler?: SchedulerLike;
  /** The run's abort signal; every tool's signal is linked to it. */
  signal?: AbortSignal;
  hooks?: Pick<LoopHooks, 'beforeToolExecution' | 'afterToolExecution' | 'beforeToolExecutionUpdate' | 'afterToolExecutionUpdate'>;
  preDispatch?: readonly PreDispatchPolicy[];
  /** The conversation, for pre-dispatch policies. */
  messages?: () => readonly AgentMessage[];
  steering?: SteeringCheck;
  /** A user stage over each tool-result message before it is emitted (redaction, say). */
  toolResults?: MonoTypeOperatorFunction<ToolResultMessage>;
  /** Calls that need approval wait for it before `execute` (see `requestApproval`). */
  approval?: ToolApprovalConfig;
  /** Cancels single calls by id: each ends with a "cancelled" error result, its tool's signal aborted. */
  cancel$?: Observable<string | ToolCallCancel>;
  /** A pre-dispatch policy said stop: the run ends after this turn. */
  onStop?(reason: string): void;
  /** A pre-dispatch policy queued messages for the next turn. */
  onInject?(messages: AgentMessage[]): void;
  now?(): number;
}

/**
 * Executes the tool calls of an assistant message and emits their lifecycle: ToolExecutionStart,
 * Update and ProgressMessage while running, ToolExecutionEnd, then the tool-result message
 * (MessageStart / MessageEnd). Every call gets exactly one result; unknown tools, invalid
 * arguments (validated before `execute`), throws, erroring Observables and timeouts become
 * `isError` results the model can read.
 *
 * Strategies: `parallel` runs all at once (`mergeMap`), `sequential` one by one (`concatMap`),
 * `{ batched: n }` n at a time, batch after batch. Steering checkpoints follow spec 003: between
 * calls (sequential), between batches (batched), never inside a parallel batch. At a checkpoint
 * with steering queued, policy `skip` gives the remaining calls "Skipped due to queued user
 * message."; `interrupt` also cancels running calls the moment steering arrives; `wait` runs all.
 *
 * ```
 * calls:      (ab|)                          a takes 30 ms, b takes 10 ms
 * dispatchTools({ tools, loopId, strategy: 'parallel' })
 * output:     (SS) 6ms (EMm) 15ms (EMm|)     S: ToolExecutionStart, E: ToolExecutionEnd, Mm: result message
 *             both start at 0; b ends at 10, a at 30: End events come in completion order
 * ```
 *
 * @example
 * from(toolCallsOf(assistant)).pipe(
 *   dispatchTools({ tools, loopId, strategy: { batched: 2 }, timeoutMs: 30_000 }),
 * ).subscribe(render);
 */
export function dispatchTools(options: DispatchToolsOptions): OperatorFunction<ToolCall, AgentEvent> {
  return (calls$) =>
    defer(() => {
      const dispatch = new ToolDispatcher(options);
      const cancels = dispatch.cancels && options.cancel$ ? dispatch.cancels.connect(options.cancel$) : undefined;
      const strategy = options.strategy ?? 'parallel';
      let events$: Observable<AgentEvent>;
      if (strategy === 'parallel') events$ = calls$.pipe(mergeMap((call) => dispatch.one(call)));
      else if (strategy === 'sequential') events$ = calls$.pipe(concatMap((call) => concat(dispatch.one(call), dispatch.checkpoint())));
      else {
        const size = Math.max(1, Math.floor(strategy.batched));
        events$ = calls$.pipe(
          bufferCount(size),
          concatMap((batch) => concat(from(batch).pipe(mergeMap((call) => dispatch.one(call))), dispatch.checkpoint())),
        );
      }
      return cancels ? events$.pipe(finalize(cancels)) : events$;
    });
}

/** `dispatchTools` over an array of calls (of turn `turnId`) as a plain call: the events go to `out`, then `complete`; returns the teardown. */
export type DirectDispatch = (calls: readonly ToolCall[], out: Observer<AgentEvent>, turnId?: TurnId) => () => void;

/**
 * `dispatchTools` without an Observable per call, for a configuration that has nothing to wait
 * for (no pre-dispatch policy, tool hook, approval or result stage; steering and single-call
 * cancellation are fine) and runs its calls in parallel or in sequence: the same events in the
 * same order, as plain calls. Undefined for any other configuration. The loop's tool stage uses
 * it on every turn (`runToolCalls`): one dispatch serves every message of a loop.
 */
export function directDispatch(options: DispatchToolsOptions): DirectDispatch | undefined {
  const strategy = options.strategy ?? 'parallel';
  if (strategy !== 'parallel' && strategy !== 'sequential') return undefined;
  const dispatch = new ToolDispatcher(options);
  if (!dispatch.isDirect()) return undefined;
  return strategy === 'parallel' ? (calls, out, turnId) => dispatch.parallel(calls, out, turnId) : (calls, out, turnId) => dispatch.sequential(calls, out, turnId);
}

export { TOOL_TEXTS };
