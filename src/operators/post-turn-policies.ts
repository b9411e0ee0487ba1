import { asyncScheduler, concat, concatMap, from, type Observable, of, type SchedulerLike } from 'rxjs';
import type { AgentEvent } from '../types/events.js';
import { type AssistantMessage, type LlmMessage, toolCallsOf } from '../types/message.js';
import { errorMessage } from '../types/errors.js';
import type { PostTurnPolicy, PostTurnVerdict } from '../types/hooks.js';
import { callHookSafely } from '../sources/hook-result.js';
import type { LoopOutput, LoopStage, LoopState } from './loop-state.js';

export interface PostTurnPoliciesOptions {
  /** Clock for the events' timestamps (default asyncScheduler). */
  scheduler?: SchedulerLike;
}

const CONTINUE: PostTurnVerdict = { action: 'continue' };

/**
 * Asks the post-turn policies, one after the other, about the turn's assistant message and tool
 * results. `stop` sets `stopRequested` (the policies after it are not asked); `inject` replaces the
 * assistant message, in `assistant` and in `messages`, when its tool calls are the same (ids and
 * names), else a `HookError` says it was refused and the original is kept. A policy that throws or
 * fails emits a `HookError` and counts as `continue`. A state that has ended, has no assistant
 * message, or already has a stop requested passes through.
 *
 * Contract: per input state, a HookError per failed or refused policy, then the state with
 * `stopRequested` and `assistant` / `messages` as the verdicts said (new values; the input is not changed).
 *
 * ```
 * source:   --s------|          (s: an assistant message; policy 1 throws, policy 2 says stop "enough")
 * postTurnPolicies([p1, p2])
 * output:   --(hs')--|          (h: HookError postTurn, s': { ...s, stopRequested: 'enough' })
 * ```
 *
 * @example
 * const stopOnDone: PostTurnPolicy = ({ message }) => (textOf(message).includes('DONE') ? { action: 'stop', reason: 'done' } : undefined);
 * const turn = loopStages(startTurn(), buildRequest(request), callModel({ provider }), runToolCalls({ tools }), postTurnPolicies([stopOnDone]), endTurn());
 */
export function postTurnPolicies(policies: readonly PostTurnPolicy[], options: PostTurnPoliciesOptions = {}): LoopStage {
  const scheduler = options.scheduler ?? asyncScheduler;
  const hookError = (state: LoopState, message: string): AgentEvent => ({ type: 'HookError', loopId: state.loopId, hook: 'postTurn', message, timestamp: scheduler.now() });

  const askFrom = (index: number, state: LoopState): Observable<LoopOutput> => {
    const policy = policies[index];
    const message = state.assistant;
    if (!policy || !message || state.stopRequested !== undefined) return of(state);
    let report: AgentEvent | undefined;
    const ctx = { message, toolResults: state.toolResults ?? [], messages: state.messages, turnIndex: state.turnIndex };
    return callHookSafely(() => policy(ctx), CONTINUE, (e) => (report = hookError(state, errorMessage(e)))).pipe(
      concatMap((verdict) => {
        const events: AgentEvent[] = report ? [report] : [];
        let next = state;
        if (verdict.action === 'stop') next = { ...state, stopRequested: verdict.reason };
        else if (verdict.action === 'inject') {
          if (signature(verdict.message) !== signature(message)) {
            events.push(hookError(state, 'an Inject verdict may replace the assistant message but not add or drop tool calls; kept the original'));
          } else next = replaced(state, message, verdict.message);
        }
        return events.length > 0 ? concat(from(events), askFrom(index + 1, next)) : askFrom(index + 1, next);
      }),
    );
  };

  return concatMap((state: LoopState) => (policies.length === 0 || state.ended ? of(state) : askFrom(0, state)));
}

function signature(m: AssistantMessage): string {
  return toolCallsOf(m).map((c) => `${c.id}:${c.name}`).join(',');
}

/** The state with `current` replaced by `next` (keeping its turn id) in `assistant` and `messages`. */
function replaced(state: LoopState, current: AssistantMessage, next: AssistantMessage): LoopState {
  const turnId = (current as LlmMessage).turnId;
  const replacement = (turnId ? { ...next, turnId } : { ...next }) as AssistantMessage;
  const at = state.messages.lastIndexOf(current);
  if (at < 0) return { ...state, assistant: replacement };
  const messages = state.messages.slice();
  messages[at] = replacement;
  return { ...state, assistant: replacement, messages };
}
