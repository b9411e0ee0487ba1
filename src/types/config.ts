/** Tuning for tiered compaction. Effective budget = maxContextTokens - systemPromptTokens. */
export interface ContextConfig {
  maxContextTokens: number;
  systemPromptTokens: number;
  keepRecent: number;
  keepFirst: number;
  toolOutputMaxLines: number;
}

export const DEFAULT_CONTEXT_CONFIG: ContextConfig = {
  maxContextTokens: 100_000,
  systemPromptTokens: 4_000,
  keepRecent: 10,
  keepFirst: 2,
  toolOutputMaxLines: 50,
};

/** Hard caps on one run. Any field left out is not enforced. */
export interface ExecutionLimits {
  maxTurns?: number;
  maxTotalTokens?: number;
  maxDurationMs?: number;
  /** Dollars, priced with the model's CostConfig. */
  maxCost?: number;
}

export const DEFAULT_EXECUTION_LIMITS: Required<Omit<ExecutionLimits, 'maxCost'>> = {
  maxTurns: 50,
  maxTotalTokens: 1_000_000,
  maxDurationMs: 600_000,
};

/** Exponential backoff for rateLimited and network errors. */
export interface RetryConfig {
  maxRetries: number;
  initialDelayMs: number;
  backoffMultiplier: number;
  maxDelayMs: number;
  /** Fractional jitter: 0.2 means x[0.8, 1.2). */
  jitter: number;
}

export const DEFAULT_RETRY_CONFIG: RetryConfig = {
  maxRetries: 3,
  initialDelayMs: 1_000,
  backoffMultiplier: 2,
  maxDelayMs: 30_000,
  jitter: 0.2,
};

export const NO_RETRY: RetryConfig = { ...DEFAULT_RETRY_CONFIG, maxRetries: 0 };

/** How a continuation relates to the loop it continues. Tags are RFC 3339 timestamps. */
export type ContinuationKind = { kind: 'default' } | { kind: 'rerun'; tag: string } | { kind: 'branch'; tag: string };

/** What started a turn. */
export type TurnTrigger = 'user' | 'subAgent' | 'continuation' | 'branch';

/** How many queued messages one read takes. */
export type QueueMode = 'oneAtATime' | 'all';

/**
 * What queued steering does to a tool batch:
 * - `wait`: the batch finishes; steering joins the next turn.
 * - `skip`: at the strategy's checkpoint, calls not yet started get "Skipped due to queued user message.".
 * - `interrupt`: running calls are cancelled at once, unstarted ones skipped.
 */
export type SteeringPolicy = 'wait' | 'skip' | 'interrupt';

export type ToolExecutionStrategy = 'parallel' | 'sequential' | { batched: number };

export type ThinkingLevel = 'off' | 'minimal' | 'low' | 'medium' | 'high';

export type CacheStrategy =
  | { kind: 'auto' }
  | { kind: 'disabled' }
  | { kind: 'manual'; cacheSystem: boolean; cacheTools: boolean; cacheMessages: boolean };

export interface CacheConfig {
  enabled: boolean;
  strategy: CacheStrategy;
}

export const DEFAULT_CACHE_CONFIG: CacheConfig = { enabled: true, strategy: { kind: 'auto' } };
