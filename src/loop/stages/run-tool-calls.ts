import { asyncScheduler, from, identity, type MonoTypeOperatorFunction, type Observer, type OperatorFunction } from 'rxjs';
import type { AgentEvent } from '../../types/events.js';
import type { ToolCall } from '../../types/content.js';
import { type AgentMessage, type ToolResultMessage, toolCallsOf, type TurnId, withTurnId } from '../../types/message.js';
import type { AnyTool } from '../../types/tool.js';
import { TOOL_TEXTS } from '../../sources/tool-run.js';
import { type DirectDispatch, directDispatch, dispatchTools, type DispatchToolsOptions } from '../../operators/dispatch-tools.js';
import { type LoopStage, type LoopState, type RunInfo, stateByState } from '../kernel/loop-state.js';
import { keptPerRun } from '../kernel/kept-per-run.js';
import { copyState } from '../kernel/state-with.js';

export interface RunToolCallsOptions extends Omit<DispatchToolsOptions, 'loopId' | 'messages' | 'onStop' | 'onInject'> {
  /** A user stage over the calls before dispatch (not applied to a truncated message); a call it drops gets an error result. */
  toolCalls?: MonoTypeOperatorFunction<ToolCall>;
  /** The tools a turn offered, when they differ from `tools` (`prepareTurn`): its calls run with those only. */
  toolsOf?(state: LoopState): readonly AnyTool[] | undefined;
}

/**
 * The loop's tool stage: runs the tool calls of the state's `assistant` message with
 * `dispatchTools` (strategy, timeouts, hooks, pre-dispatch policies, steering checkpoints) and
 * hands on their results in the order of the calls, whatever order they finished in. Each result
 * is tagged with the turn (`turnId`); a call that a `toolCalls` stage dropped still gets an error
 * result (the model needs an answer to every call). The calls of a message cut off at `length`
 * are never run (their arguments may be incomplete): each gets a "truncated" result. A state with
 * no assistant message, or one that ended in `error` or `guardRail`, or with no calls, passes
 * through untouched.
 *
 * The run's signal, steering, call cancellations and approval (`state.run`) are used where the
 * options name none: one stage serves every run.
 *
 * Contract: per input state, the tools' lifecycle events, then the state with `toolResults` set,
 * messages a pre-dispatch policy injected appended to `pending`, and `stopRequested` if one said
 * stop. The results are not added to `messages`: the loop records them.
 *
 * ```
 * source:   --s------------|          (s: an assistant message calling a (30 ms) and b (10 ms))
 * runToolCalls({ tools })
 * output:   --(SS) 6ms (EMm) 15ms (EMm s')|     (s': { ...s, toolResults: [a's, b's] })
 * ```
 *
 * @example
 * of({ ...state, assistant }).pipe(runToolCalls({ tools: [readFile], strategy: 'sequential' }))
 *   .subscribe((out) => isLoopState(out) && console.log(out.toolResults));
 */
export function runToolCalls(options: RunToolCallsOptions): LoopStage {
  const { toolCalls, toolsOf, ...dispatch } = options;
  const now = options.now ?? (() => (options.scheduler ?? asyncScheduler).now());
  // Nothing to wait for in the configuration: the calls run as plain calls, one dispatch per run
  // (kept by the state's `run`, so that one stage serves interleaved runs; by loop id without one).
  const directFor = keptPerRun(({ loopId, run }): DirectDispatch | undefined =>
    toolCalls ? undefined : directDispatch(Object.assign({}, dispatch, { loopId, now }, run && fromRun(dispatch, run))));
  return stateByState((state, out, done) => {
    const assistant = state.assistant;
    const calls = assistant && assistant.stopReason !== 'error' && assistant.stopReason !== 'guardRail' ? toolCallsOf(assistant) : [];
    if (calls.length === 0) {
      out.next(state);
      return done();
    }
    const truncated = assistant!.stopReason === 'length';
    // Each result carries its turn from its first event on: an emitted message is never changed.
    const turnId: TurnId = { loopId: state.loopId, turnIndex: state.turnIndex };
    // Each call's result, at the call's position (a handful of calls: found by a scan, no Map per turn).
    const results: (ToolResultMessage | undefined)[] = new Array<ToolResultMessage | undefined>(calls.length);
    const injected: AgentMessage[] = [];
    let stop: string | undefined;
    const events: Observer<AgentEvent> = {
      next: (e) => {
        if (e.type === 'MessageEnd' && e.message.role === 'toolResult') placeResult(calls, results, e.message);
        out.next(e);
      },
      error: (error: unknown) => out.error(error),
      complete: () => {
        const inOrder: ToolResultMessage[] = [];
        for (let i = 0; i < calls.length; i++) {
          const call = calls[i]!;
          let result = results[i];
          if (!result) {
            const dropped: ToolResultMessage = { role: 'toolResult', toolCallId: call.id, toolName: call.name, content: [{ type: 'text', text: 'Tool call was dropped before dispatch.' }], isError: true, timestamp: now() };
            result = withTurnId(dropped, turnId);
            out.next({ type: 'MessageStart', loopId: state.loopId, message: result, timestamp: now() });
            out.next({ type: 'MessageEnd', loopId: state.loopId, message: result, timestamp: now() });
          }
          inOrder.push(result);
        }
        const next = copyState(state);
        next.toolResults = inOrder;
        if (injected.length > 0) next.pending = [...state.pending, ...injected];
        if (stop !== undefined) next.stopRequested = stop;
        out.next(next);
        done();
      },
    };
    const turnTools = toolsOf?.(state);
    const run = truncated || turnTools ? undefined : directFor(state);
    if (run) return run(calls, events, turnId);
    const subscription = from(calls).pipe(
      truncated ? identity : (toolCalls ?? identity),
      dispatchTools(Object.assign({}, dispatch, state.run && fromRun(dispatch, state.run), turnTools && { tools: turnTools }, {
        loopId: state.loopId,
        turnId,
        now,
        preDispatch: truncated ? [() => ({ action: 'skip', reason: TOOL_TEXTS.truncated })] : (dispatch.preDispatch ?? []),
        messages: () => state.messages,
        onStop: (reason) => (stop = reason),
        onInject: (messages: AgentMessage[]) => injected.push(...messages),
      } satisfies Partial<DispatchToolsOptions>)) as OperatorFunction<ToolCall, AgentEvent>,
    ).subscribe(events);
    return () => subscription.unsubscribe();
  });
}

type RunFields = Pick<DispatchToolsOptions, 'signal' | 'steering' | 'cancel$' | 'approval'>;

/** What a dispatch takes from its run (`state.run`) where the stage's options name nothing: the signal, steering, call cancellations and approval. */
function fromRun(options: RunFields, run: RunInfo): RunFields {
  const taken: RunFields = {};
  if (options.signal === undefined && run.signal !== undefined) taken.signal = run.signal;
  if (options.steering === undefined && run.steering !== undefined) taken.steering = run.steering;
  if (options.cancel$ === undefined && run.cancelToolCalls !== undefined) taken.cancel$ = run.cancelToolCalls;
  if (options.approval === undefined && run.approval !== undefined) taken.approval = run.approval;
  return taken;
}

/** Puts a result at the position of the first call with its id that has none yet. */
function placeResult(calls: readonly ToolCall[], results: (ToolResultMessage | undefined)[], result: ToolResultMessage): void {
  for (let i = 0; i < calls.length; i++) {
    if (calls[i]!.id === result.toolCallId && results[i] === undefined) {
      results[i] = result;
      return;
    }
  }
}
