import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { AgentEvent } from '../../types/events.js';
import { DEFAULT_CONTEXT_CONFIG, type ContextConfig } from '../../types/config.js';
import { compactMessages, effectiveBudget } from '../../context/compaction.js';
import { estimateContextTokens } from '../../context/tokens.js';
import { type LoopStage, loopStage } from '../kernel/loop-state.js';
import { stateWith } from '../kernel/state-with.js';

export interface CompactContextOptions {
  /**
   * `budget` (default): compact only a context over the budget. `overflow`: the provider said the
   * last context did not fit, so the estimate was wrong: always compact, to 60% of what was sent.
   */
  reason?: 'budget' | 'overflow';
  /** Clock for the events' timestamps (default asyncScheduler). */
  scheduler?: SchedulerLike;
}

/**
 * The loop's compaction stage: fits each state's context into the token budget (`compact`'s three
 * tiers) and announces it with `CompactionStart` and `CompactionEnd`. A context within budget (with
 * reason `budget`) and a state whose run has ended pass through untouched, with no event.
 *
 * Contract: per input state, either the state itself, or CompactionStart, CompactionEnd and then
 * the state with `messages` replaced by the compacted ones (nothing else changed).
 *
 * ```
 * source:   --s--L--|          (s: a state within budget, L: over budget)
 * compactContext(config)
 * output:   --s--(abL')--|     (a: CompactionStart, b: CompactionEnd, L': L with compacted messages)
 * ```
 *
 * @example
 * of(loopState('loop-1', history)).pipe(compactContext({ maxContextTokens: 8_000 }))
 *   .subscribe((out) => (isLoopState(out) ? send(out.messages) : log(out.type)));
 */
export function compactContext(config: Partial<ContextConfig> = {}, options: CompactContextOptions = {}): LoopStage {
  const full: ContextConfig = { ...DEFAULT_CONTEXT_CONFIG, ...config };
  const reason = options.reason ?? 'budget';
  const scheduler = options.scheduler ?? asyncScheduler;
  return loopStage((state) => {
    if (state.ended) return state;
    const tokensBefore = estimateContextTokens(state.messages);
    const budget = reason === 'overflow' ? Math.min(effectiveBudget(full), Math.floor(tokensBefore * 0.6)) : effectiveBudget(full);
    if (reason === 'budget' && tokensBefore <= budget) return state;
    const startedAt = scheduler.now();
    const result = compactMessages(state.messages, full, budget);
    const start: AgentEvent = { type: 'CompactionStart', loopId: state.loopId, reason, tokensBefore, timestamp: startedAt };
    const end: AgentEvent = {
      type: 'CompactionEnd',
      loopId: state.loopId,
      tier: result.tier ?? 1,
      tokensBefore: result.tokensBefore,
      tokensAfter: result.tokensAfter,
      messagesBefore: state.messages.length,
      messagesAfter: result.messages.length,
      timestamp: scheduler.now(),
    };
    return [start, end, stateWith(state, { messages: result.messages })];
  });
}
