import { asyncScheduler, concat, of, type SchedulerLike } from 'rxjs';
import { type AgentMessage, type AssistantMessage, type LlmMessage, toolCallsOf } from '../../types/message.js';
import type { PostTurnPolicy, PostTurnVerdict } from '../../types/hooks.js';
import { askHook, hookError } from '../kernel/ask-hook.js';
import { asObservable, type LoopStage, loopStage, type LoopState, type LoopStateDraft, type StepOutputs } from '../kernel/loop-state.js';
import { copyState, stateWith } from '../kernel/state-with.js';

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
 * fails emits a `HookError` and counts as `continue`. Every turn that has an assistant message is
 * asked about, one that ended the run included (an `error` or `aborted` message: `recordAssistant`
 * set `ended`); a state with no assistant message, or with a stop already requested, passes through.
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
  const askFrom = (index: number, state: LoopState): StepOutputs => {
    const policy = policies[index];
    const message = state.assistant;
    if (!policy || !message || state.stopRequested !== undefined) return state;
    const ctx = { message, toolResults: state.toolResults ?? [], messages: state.messages, turnIndex: state.turnIndex };
    return askHook('postTurn', state.loopId, () => policy(ctx), CONTINUE, scheduler, (verdict): StepOutputs => {
      if (verdict.action === 'stop') return askFrom(index + 1, stateWith(state, { stopRequested: verdict.reason }));
      if (verdict.action !== 'inject') return askFrom(index + 1, state);
      if (signature(verdict.message) === signature(message)) return askFrom(index + 1, replaced(state, message, verdict.message));
      const refused = hookError('postTurn', state.loopId, 'an Inject verdict may replace the assistant message but not add or drop tool calls; kept the original', scheduler.now());
      return concat(of(refused), asObservable(askFrom(index + 1, state)));
    });
  };
  return loopStage((state) => (policies.length === 0 ? state : askFrom(0, state)));
}

function signature(m: AssistantMessage): string {
  return toolCallsOf(m).map((c) => `${c.id}:${c.name}`).join(',');
}

/** The state with `current` replaced by `next` (keeping its turn id) in `assistant`, `messages` and the run's records. */
function replaced(state: LoopState, current: AssistantMessage, next: AssistantMessage): LoopState {
  const turnId = (current as LlmMessage).turnId;
  const replacement = (turnId ? { ...next, turnId } : { ...next }) as AssistantMessage;
  const swap = (list: readonly AgentMessage[] | undefined): readonly AgentMessage[] | undefined => {
    const at = list ? list.lastIndexOf(current) : -1;
    if (!list || at < 0) return list;
    const copy = list.slice();
    copy[at] = replacement;
    return copy;
  };
  const out = copyState(state);
  out.assistant = replacement;
  out.messages = swap(state.messages)!;
  if (state.newMessages) out.newMessages = swap(state.newMessages)!;
  if (state.sinceRequest) out.sinceRequest = swap(state.sinceRequest)!;
  return out;
}
