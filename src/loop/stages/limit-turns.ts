import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { ExecutionLimits } from '../../types/config.js';
import type { AgentMessage, AssistantMessage } from '../../types/message.js';
import { Usage, type CostConfig } from '../../types/usage.js';
import { ExecutionTracker } from '../../context/execution.js';
import { announce, type LoopStage, loopStage, withRecords } from '../kernel/loop-state.js';
import { stateWith } from '../kernel/state-with.js';

export interface LimitTurnsOptions {
  /**
   * Rates for `maxCost` (default: cost is not counted); a function prices each of the run's
   * assistant messages by the model that wrote it (a fallback chain).
   */
  pricing?: CostConfig | ((message: AssistantMessage) => CostConfig | undefined);
  /** Clock for `maxDurationMs` and the events' timestamps (default asyncScheduler). */
  scheduler?: SchedulerLike;
}

/**
 * Guards each turn against the run's execution limits (put it first in the turn): the turns run
 * so far (`turnIndex`), the tokens and cost of the run's `usage` and the scheduler time since the
 * first turn was due (`startedAt`, set by the first state it sees). Over a limit, the run ends
 * (`maxTurns` for the turn limit, else `guardRail`) with a user message `[Agent stopped: reason]`
 * in the context (announced with MessageStart / MessageEnd). A state whose run has ended passes through.
 *
 * Contract: per input state, nothing, or the stop message's MessageStart / MessageEnd; then the
 * state (with `startedAt`), ended when over a limit.
 *
 * ```
 * source:   --s----t----|        (t: turnIndex 2)
 * limitTurns({ maxTurns: 2 })
 * output:   --s'---(abt')|       (a/b: MessageStart/End of "[Agent stopped: Max turns reached (2/2)]", t': ended maxTurns)
 * ```
 *
 * @example
 * repeatTurns(loopStages(limitTurns({ maxTurns: 20, maxCost: 0.5 }, { pricing: model.cost }), turn, decideNext()), { more: (s) => !s.ended });
 */
export function limitTurns(limits: ExecutionLimits, options: LimitTurnsOptions = {}): LoopStage {
  const scheduler = options.scheduler ?? asyncScheduler;
  return loopStage((state) => {
    if (state.ended) return state;
    const now = scheduler.now();
    const startedAt = state.startedAt ?? now;
    const pricing = options.pricing;
    const tracker = new ExecutionTracker(limits, startedAt);
    tracker.turns = state.turnIndex;
    if (state.usage) {
      tracker.tokens = Usage.tokensOf(state.usage);
      if (typeof pricing === 'function') tracker.cost = costPerMessage(state.newMessages ?? [], pricing);
      else if (pricing) tracker.cost = Usage.estimatedCost(state.usage, pricing);
    }
    const reason = tracker.exceeded(now);
    const timed = state.startedAt === undefined ? stateWith(state, { startedAt }) : state;
    if (reason === undefined) return timed;
    const message: AgentMessage = { role: 'user', content: [{ type: 'text', text: `[Agent stopped: ${reason}]` }], timestamp: now };
    const ended = reason.startsWith('Max turns') ? 'maxTurns' : 'guardRail';
    return [...announce(state.loopId, message, now), stateWith(withRecords(timed, [message]), { ended })];
  });
}

function costPerMessage(messages: readonly AgentMessage[], pricing: (message: AssistantMessage) => CostConfig | undefined): number {
  let cost = 0;
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    const rates = pricing(m);
    if (rates) cost += Usage.estimatedCost(m.usage, rates);
  }
  return cost;
}
