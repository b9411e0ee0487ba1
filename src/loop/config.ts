import type { MonoTypeOperatorFunction, Observable, SchedulerLike } from 'rxjs';
import type { ToolCall } from '../types/content.js';
import type { AgentEvent } from '../types/events.js';
import type { AgentMessage, Message, ToolResultMessage } from '../types/message.js';
import type { ModelConfig, Provider, StreamEvent } from '../types/provider.js';
import type { AnyTool } from '../types/tool.js';
import type {
  CacheConfig, ContextConfig, ContinuationKind, ExecutionLimits, RetryConfig, SteeringPolicy, ThinkingLevel, ToolExecutionStrategy,
} from '../types/config.js';
import type { HookResult, InputFilter, LoopHooks, LoopPolicies } from '../types/hooks.js';
import type { MessageSource } from '../sources/queues.js';
import type { ToolApprovalConfig } from '../operators/request-approval.js';
import type { ToolCallCancel } from '../operators/internal/call-cancellations.js';
import type { ModelChoice } from './model-chain.js';
import type { OutputSchema } from '../output/output-spec.js';
import type { StopCondition } from './stop-conditions.js';
import type { PrepareTurn } from './stages/prepare-turn.js';
import type { LoopGuardrails } from './guardrails.js';

/** What a loop runs on: the conversation so far, the tools, and who is running it. */
export interface AgentContext {
  systemPrompt: string;
  messages: AgentMessage[];
  tools: readonly AnyTool[];
  agentId?: string;
  sessionId?: string;
  /** `{sessionId}.{configId}.{N}`; BasicAgent sets it, a direct caller may (else a fresh id is used). */
  loopId?: string;
  parentLoopId?: string;
  /** The tool call that started this loop (sub-agents set it); carried on AgentStart. */
  parentToolCallId?: string;
  continuationKind?: ContinuationKind;
  /** With handoff tools: the agent the run starts with (`BasicAgent` sets the one that answered last); default `config.agentName`. */
  agent?: string;
}

/**
 * Your own operators at the documented stages of the pipeline. Each is applied where the loop
 * would otherwise pass the value straight on, so it can observe, rewrite, delay or drop.
 */
export interface PipelineOperators {
  /** The context about to be sent, once per model call (after transforms and compaction). */
  context?: MonoTypeOperatorFunction<AgentMessage[]>;
  /** The provider's raw stream, before retry and message assembly (wrap it in a circuit breaker, log it ...). */
  providerStream?: MonoTypeOperatorFunction<StreamEvent>;
  /** The tool calls of an assistant message, before dispatch. A call you drop gets an error result. */
  toolCalls?: MonoTypeOperatorFunction<ToolCall>;
  /** Each tool-result message, before ToolExecutionEnd and before the model sees it. */
  toolResults?: MonoTypeOperatorFunction<ToolResultMessage>;
  /** Every outgoing event. */
  events?: MonoTypeOperatorFunction<AgentEvent>;
}

export interface AgentLoopConfig {
  model: ModelConfig;
  /** Bypasses the provider registry (tests, custom backends). */
  provider?: Provider;
  /**
   * A model fallback chain, `[primary, ...fallbacks]`, whose first entry is `model`: when a call
   * fails after its retries with a retryable error, with an open circuit, or with a context overflow
   * beyond recovery, the next model takes the turn and the rest of the run (a `ModelFallback` event
   * says so). Entries are ModelConfigs (provider from the registry) or `{ model, provider }`.
   */
  models?: readonly ModelChoice[];
  /** The `{configId}` segment of loop ids; derived from provider and model when absent. */
  configId?: string;
  thinkingLevel?: ThinkingLevel;
  maxTokens?: number;
  temperature?: number;
  cacheConfig?: CacheConfig;
  /** Backoff for rateLimited / network errors; `false` disables retries. */
  retry?: Partial<RetryConfig> | false;
  /** Randomness for retry jitter; inject for reproducible delays. */
  random?: () => number;
  /** Compaction settings; absent means compaction is off (and a context overflow ends the turn in error). */
  contextConfig?: Partial<ContextConfig>;
  limits?: ExecutionLimits;
  toolExecution?: ToolExecutionStrategy;
  /** Per-call tool timeout in ms; a tool's own `timeoutMs` wins. */
  toolTimeoutMs?: number;
  steering?: MessageSource;
  followUp?: MessageSource;
  /** What queued steering does to a running tool batch (default `skip`, spec 003's checkpoints). */
  steeringPolicy?: SteeringPolicy;
  hooks?: LoopHooks;
  inputFilters?: readonly InputFilter[];
  policies?: LoopPolicies;
  /** Runs first before each call (RAG, summaries); gets the run's signal. */
  asyncTransformContext?(messages: AgentMessage[], signal: AbortSignal | undefined): HookResult<AgentMessage[]>;
  /** Runs second, synchronously, before each call. */
  transformContext?(messages: AgentMessage[]): AgentMessage[];
  /** Maps the agent's messages to what the model receives; default drops extension messages. */
  convertToLlm?(messages: readonly AgentMessage[]): Message[];
  /** Resolves the API key for each call (rotating keys, vaults). */
  getApiKey?(model: ModelConfig): HookResult<string | undefined>;
  /** Graceful abort: the run still ends with TurnEnd and AgentEnd (stopReason `aborted`). */
  signal?: AbortSignal;
  /** Time source for timestamps, delays, timeouts and limits (default asyncScheduler). */
  scheduler?: SchedulerLike;
  /** Id source for agent, session and loop ids (default crypto.randomUUID). */
  ids?: () => string;
  /** What the first turn of an origin call is triggered by (`subAgent` for sub-agents). */
  firstTurnTrigger?: 'user' | 'subAgent';
  operators?: PipelineOperators;
  /** Human in the loop: which calls wait for approval and where the answers come from (README "Human approval"). */
  approval?: ToolApprovalConfig;
  /** Cancels single tool calls by id while the run goes on (README "Cancelling one tool call"). */
  cancelToolCalls?: Observable<string | ToolCallCancel>;
  /** Carried on AgentStart. */
  metadata?: unknown;
  /** This agent's name when its tools hand off to others (`handoff()`), in `Handoff` events and on `AgentStart`/`AgentEnd` (default `main`). */
  agentName?: string;
  /**
   * Structured output: the run ends with its answer parsed and validated against this schema
   * (zod / Standard Schema, JSON Schema of an object, or `defineOutput(...)`), on `AgentEnd.output`;
   * an invalid answer gets one corrective turn, then `AgentEnd.outputError`.
   */
  output?: OutputSchema;
  /**
   * Ends the run after a turn that would be followed by another, once one of these holds
   * (`turnCount(n)`, `toolCalled(name)`, `costOver(usd)`, `tokensOver(n)`, `textMatches(re)`,
   * `anyOf` / `allOf`, or your own): `AgentEnd.stopReason` `userStop`, `stoppedBy` names it.
   */
  stopWhen?: StopCondition | readonly StopCondition[];
  /** Asked before each model call: that call's model (and provider), tools, system prompt, messages (docs/loop.md "Per-turn control"). */
  prepareTurn?: PrepareTurn;
  /** Input, output and tool guardrails with tripwires (docs/loop.md "Guardrails"). */
  guardrails?: LoopGuardrails;
}
