import type { ExecutionLimits } from '../types/config.js';
import { Usage, type CostConfig } from '../types/usage.js';

/** Counts turns, tokens, cost and time of one run against its limits. */
export class ExecutionTracker {
  turns = 0;
  tokens = 0;
  cost = 0;

  constructor(
    readonly limits: ExecutionLimits,
    readonly startedAt: number,
    private readonly pricing?: CostConfig,
  ) {}

  recordTurn(usage: Usage): void {
    this.turns++;
    this.tokens += Usage.tokensOf(usage);
    if (this.pricing) this.cost += Usage.estimatedCost(usage, this.pricing);
  }

  /** Why the run must stop now, or undefined. The texts follow phi-core ("Max turns reached (50/50)"). */
  exceeded(now: number): string | undefined {
    const { maxTurns, maxTotalTokens, maxDurationMs, maxCost } = this.limits;
    if (maxTurns !== undefined && this.turns >= maxTurns) return `Max turns reached (${this.turns}/${maxTurns})`;
    if (maxTotalTokens !== undefined && this.tokens >= maxTotalTokens) {
      return `Max tokens reached (${this.tokens}/${maxTotalTokens})`;
    }
    if (maxCost !== undefined && this.cost >= maxCost) return `Max cost reached ($${this.cost.toFixed(4)}/$${maxCost.toFixed(4)})`;
    const elapsed = now - this.startedAt;
    if (maxDurationMs !== undefined && elapsed >= maxDurationMs) {
      return `Max duration reached (${Math.round(elapsed / 1000)}s/${Math.round(maxDurationMs / 1000)}s)`;
    }
    return undefined;
  }
}
