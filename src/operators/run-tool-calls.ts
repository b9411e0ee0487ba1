import { asyncScheduler, concatMap, identity, type MonoTypeOperatorFunction, Observable, of, type OperatorFunction, from } from 'rxjs';
import type { AgentEvent } from '../types/events.js';
import type { ToolCall } from '../types/content.js';
import { type AgentMessage, type LlmMessage, type ToolResultMessage, toolCallsOf } from '../types/message.js';
import { TOOL_TEXTS } from '../sources/tool-run.js';
import { dispatchTools, type DispatchToolsOptions } from './dispatch-tools.js';
import type { LoopOutput, LoopStage, LoopState } from './loop-state.js';

export interface RunToolCallsOptions extends Omit<DispatchToolsOptions, 'loopId' | 'messages' | 'onStop' | 'onInject'> {
  /** A user stage over the calls before dispatch (not applied to a truncated message); a call it drops gets an error result. */
  toolCalls?: MonoTypeOperatorFunction<ToolCall>;
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
  const { toolCalls, ...dispatch } = options;
  const now = options.now ?? (() => (options.scheduler ?? asyncScheduler).now());
  return concatMap((state: LoopState): Observable<LoopOutput> => {
    const assistant = state.assistant;
    if (!assistant || assistant.stopReason === 'error' || assistant.stopReason === 'guardRail') return of(state);
    const calls = toolCallsOf(assistant);
    if (calls.length === 0) return of(state);
    const truncated = assistant.stopReason === 'length';
    return new Observable<LoopOutput>((subscriber) => {
      const results = new Map<string, ToolResultMessage>();
      const injected: AgentMessage[] = [];
      let stop: string | undefined;
      const dispatched$ = from(calls).pipe(
        truncated ? identity : (toolCalls ?? identity),
        dispatchTools({
          ...dispatch,
          loopId: state.loopId,
          now,
          preDispatch: truncated ? [() => ({ action: 'skip', reason: TOOL_TEXTS.truncated })] : (dispatch.preDispatch ?? []),
          messages: () => state.messages,
          onStop: (reason) => (stop = reason),
          onInject: (messages) => injected.push(...messages),
        }) as OperatorFunction<ToolCall, AgentEvent>,
      );
      return dispatched$.subscribe({
        next: (e) => {
          if (e.type === 'MessageEnd' && e.message.role === 'toolResult') results.set(e.message.toolCallId, e.message);
          subscriber.next(e);
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => {
          const inOrder: ToolResultMessage[] = [];
          for (const call of calls) {
            let result = results.get(call.id);
            if (!result) {
              result = { role: 'toolResult', toolCallId: call.id, toolName: call.name, content: [{ type: 'text', text: 'Tool call was dropped before dispatch.' }], isError: true, timestamp: now() };
              subscriber.next({ type: 'MessageStart', loopId: state.loopId, message: result, timestamp: now() });
              subscriber.next({ type: 'MessageEnd', loopId: state.loopId, message: result, timestamp: now() });
            }
            (result as LlmMessage).turnId = { loopId: state.loopId, turnIndex: state.turnIndex };
            inOrder.push(result);
          }
          const next: LoopState = { ...state, toolResults: inOrder, ...(injected.length > 0 ? { pending: [...state.pending, ...injected] } : {}) };
          subscriber.next(stop === undefined ? next : { ...next, stopRequested: stop });
          subscriber.complete();
        },
      });
    });
  });
}
