import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { AssistantMessage } from '../../types/message.js';
import { type CostConfig, Usage } from '../../types/usage.js';
import { askHook } from '../kernel/ask-hook.js';
import { type LoopStage, loopStage, type LoopState, type StepOutputs } from '../kernel/loop-state.js';
import { stateWith } from '../kernel/state-with.js';
import { labelOf, type StopCondition, type StopContext } from '../stop-conditions.js';

export interface StopWhenOptions {
  /** Rates for `costOver` (default: cost is 0); a function prices each assistant message by the model that wrote it. */
  pricing?: CostConfig | ((message: AssistantMessage) => CostConfig | undefined);
  /** Clock for the events' timestamps (default asyncScheduler). */
  scheduler?: SchedulerLike;
}

/**
 * Asks the stop conditions after a turn that would be followed by another (tool results to
 * answer, messages pending; put it last in the turn, before `decideNext`), in order: the first that
 * holds ends the run (`ended: 'userStop'`, `stoppedBy: { kind: 'stopWhen', condition }` on the
 * state and on `AgentEnd`), and the ones after it are not asked. A turn that ends the run by itself
 * (the model answered) is not asked about. A condition that throws or fails emits a `HookError`
 * (hook `stopWhen`) and counts as not holding. A state whose run has ended passes through.
 *
 * Contract: per input state, a HookError per failed condition, then the state, ended when one held.
 *
 * ```
 * source:   --a----b----|        (a: turn 0 with tool results; b: turn 1 with tool results)
 * stopWhen(turnCount(2))
 * output:   --a----b'---|        (b': { ...b, ended: 'userStop', stoppedBy: { kind: 'stopWhen', condition: 'turnCount(2)' } })
 * ```
 *
 * @example
 * const turn = loopStages(startTurn(), buildRequest(request), callModel({ provider }), runToolCalls({ tools }), endTurn(), stopWhen([toolCalled('done'), turnCount(8)]));
 */
export function stopWhen(conditions: StopCondition | readonly StopCondition[], options: StopWhenOptions = {}): LoopStage {
  const list: readonly StopCondition[] = typeof conditions === 'function' ? [conditions] : conditions;
  list.forEach((c, i) => {
    if (typeof c !== 'function') throw new TypeError(`stopWhen[${i}]: expected a stop condition (a function), got ${c === null ? 'null' : typeof c}`);
  });
  const scheduler = options.scheduler ?? asyncScheduler;
  const ask = (index: number, state: LoopState, ctx: StopContext): StepOutputs => {
    const condition = list[index];
    if (!condition) return state;
    return askHook<boolean>('stopWhen', state.loopId, () => condition(ctx), false, scheduler, (held) =>
      held === true ? stateWith(state, { ended: 'userStop', stoppedBy: { kind: 'stopWhen', condition: labelOf(condition, index) } }) : ask(index + 1, state, ctx),
    );
  };
  return loopStage((state) => (list.length === 0 || state.ended || !continues(state) ? state : ask(0, state, contextOf(state, options.pricing))));
}

/** Whether another turn would follow: tool results to answer or messages pending, and no stop asked. */
function continues(state: LoopState): boolean {
  return state.stopRequested === undefined && ((state.toolResults?.length ?? 0) > 0 || state.pending.length > 0);
}

function contextOf(state: LoopState, pricing: StopWhenOptions['pricing']): StopContext {
  const usage = state.usage ?? Usage.empty();
  const newMessages = state.newMessages ?? [];
  return {
    // endTurn has moved the index on: the turn that just ended is the one before.
    turns: state.turnIndex,
    turnIndex: state.turnIndex - 1,
    assistant: state.assistant,
    toolResults: state.toolResults ?? [],
    messages: state.messages,
    newMessages,
    usage,
    cost: costOf(newMessages, usage, pricing),
  };
}

function costOf(messages: StopContext['newMessages'], usage: Usage, pricing: StopWhenOptions['pricing']): number {
  if (!pricing) return 0;
  if (typeof pricing !== 'function') return Usage.estimatedCost(usage, pricing);
  let cost = 0;
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    const rates = pricing(m);
    if (rates) cost += Usage.estimatedCost(m.usage, rates);
  }
  return cost;
}
