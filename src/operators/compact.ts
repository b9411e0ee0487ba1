import { map, type OperatorFunction } from 'rxjs';
import type { AgentMessage } from '../types/message.js';
import { DEFAULT_CONTEXT_CONFIG, type ContextConfig } from '../types/config.js';
import { compactMessages, effectiveBudget, type CompactionResult } from '../context/compaction.js';

export interface CompactOptions {
  /** Override the budget (tokens); the loop passes a smaller one after a context-overflow error. */
  budget?: number;
}

/**
 * Fits each context into the token budget before a model call, in three tiers — truncate tool
 * outputs to N lines, summarize old turns, keep first + recent and drop the middle — stopping at
 * the first tier that fits. A context already within budget passes through with `tier` unset.
 *
 * ```
 * source:   --s--L--|          (s: small context, L: over budget)
 * compact(config)
 * output:   --a--b--|          (a: { messages: s, tier: undefined }, b: { tier: 1|2|3, tokensAfter <= budget })
 * ```
 *
 * @example
 * of(history).pipe(compact({ maxContextTokens: 8_000 })).subscribe(({ messages, tier }) => send(messages));
 */
export function compact(config: Partial<ContextConfig> = {}, options: CompactOptions = {}): OperatorFunction<readonly AgentMessage[], CompactionResult> {
  const full: ContextConfig = { ...DEFAULT_CONTEXT_CONFIG, ...config };
  const budget = options.budget ?? effectiveBudget(full);
  return map((messages) => compactMessages(messages, full, budget));
}

export type { CompactionResult };
