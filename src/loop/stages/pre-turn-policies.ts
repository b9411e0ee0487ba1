import { asyncScheduler, concat, from, type SchedulerLike } from 'rxjs';
import { type AgentMessage, type AssistantMessage, isExtension, withTurnId } from '../../types/message.js';
import type { PolicyVerdict, PreTurnPolicy } from '../../types/hooks.js';
import { Usage } from '../../types/usage.js';
import { askHook } from '../kernel/ask-hook.js';
import { announce, asObservable, type LoopOutput, type LoopStage, loopStage, type LoopState, type StepOutputs, withRecords } from '../kernel/loop-state.js';
import { stateWith } from '../kernel/state-with.js';

export interface PreTurnPoliciesOptions {
  /** The model asked, named on the message a `stop` leaves. */
  model: { readonly id: string; readonly provider: string };
  /** Clock for the events' timestamps (default asyncScheduler). */
  scheduler?: SchedulerLike;
}

const CONTINUE: PolicyVerdict = { action: 'continue' };

/**
 * Asks the pre-turn policies, one after the other, before the model call (put it after
 * `startTurn`), each with the messages added since the last request (`sinceRequest`), the context
 * and the turn index. `inject` adds its messages to the context at once (tagged with the turn,
 * announced with MessageStart / MessageEnd; the next policy sees them); `stop` ends the run
 * (`ended: 'guardRail'`) with an assistant message `[Stopped by policy: reason]` in the context
 * and in `assistant`, and the policies after it are not asked. A policy that throws or fails emits
 * a `HookError` and counts as `continue`. A state whose run has ended passes through.
 *
 * Contract: per input state, the events of each verdict in order, then the state with what they added.
 *
 * ```
 * source:   --s---------|          (policy 1 injects n, policy 2 says stop "budget")
 * preTurnPolicies([p1, p2], { model })
 * output:   --(abcds')--|          (a/b: MessageStart/End of n, c/d: of the stop message, s': ended guardRail)
 * ```
 *
 * @example
 * const noLongChats: PreTurnPolicy = ({ messages }) => (messages.length > 200 ? { action: 'stop', reason: 'too long' } : undefined);
 * const turn = loopStages(startTurn(), preTurnPolicies([noLongChats], { model }), buildRequest(request), callModel({ provider }), endTurn());
 */
export function preTurnPolicies(policies: readonly PreTurnPolicy[], options: PreTurnPoliciesOptions): LoopStage {
  const scheduler = options.scheduler ?? asyncScheduler;
  const askFrom = (index: number, state: LoopState): StepOutputs => {
    const policy = policies[index];
    if (!policy || state.ended) return state;
    const ctx = { newMessages: (state.sinceRequest ?? []).slice(), messages: state.messages, turnIndex: state.turnIndex };
    return askHook('preTurn', state.loopId, () => policy(ctx), CONTINUE, scheduler, (verdict): StepOutputs => {
      if (verdict.action === 'continue') return askFrom(index + 1, state);
      const [events, next] = verdict.action === 'inject' ? added(state, verdict.messages, scheduler.now()) : stopped(state, verdict.reason, options.model, scheduler.now());
      return concat(from(events), asObservable(askFrom(index + 1, next)));
    });
  };
  return loopStage((state) => (policies.length === 0 || state.ended ? state : askFrom(0, state)));
}

/** Messages joining the context in the turn: tagged, announced, recorded. */
function added(state: LoopState, messages: readonly AgentMessage[], timestamp: number): [LoopOutput[], LoopState] {
  const { loopId, turnIndex } = state;
  const stored = messages.map((m) => (isExtension(m) ? m : withTurnId(m, { loopId, turnIndex })));
  return [stored.flatMap((m) => announce(loopId, m, timestamp)), withRecords(state, stored)];
}

function stopped(state: LoopState, reason: string, model: PreTurnPoliciesOptions['model'], timestamp: number): [LoopOutput[], LoopState] {
  const message: AssistantMessage = {
    role: 'assistant',
    content: [{ type: 'text', text: `[Stopped by policy: ${reason}]` }],
    stopReason: 'guardRail',
    model: model.id,
    provider: model.provider,
    usage: Usage.empty(),
    timestamp,
    errorMessage: reason,
  };
  const [events, next] = added(state, [message], timestamp);
  const stored = next.messages[next.messages.length - 1] as AssistantMessage;
  return [events, stateWith(next, { assistant: stored, ended: 'guardRail' })];
}
