import type { ContinuationKind, TurnTrigger } from './config.js';
import type { AgentMessage, AssistantMessage, Message, ToolResultMessage, StopReason } from './message.js';
import type { ToolResult } from './tool.js';
import type { Usage } from './usage.js';
import type { OutputFailure } from '../output/output-spec.js';

/** A streamed piece of an assistant message. */
export type StreamDelta =
  | { type: 'text'; contentIndex: number; delta: string }
  | { type: 'thinking'; contentIndex: number; delta: string }
  | { type: 'toolCall'; contentIndex: number; delta: string; id?: string; name?: string };

export interface AgentStartEvent {
  type: 'AgentStart';
  agentId: string;
  sessionId: string;
  loopId: string;
  parentLoopId?: string;
  /** The tool call that started this loop (sub-agents): its id in the loop `parentLoopId`. */
  parentToolCallId?: string;
  continuationKind?: ContinuationKind;
  timestamp: number;
  metadata?: unknown;
  /** The agent the run starts with, when its tools hand off (`handoff()`): `config.agentName`, or `context.agent`. */
  agent?: string;
}

export interface AgentEndEvent {
  type: 'AgentEnd';
  loopId: string;
  /** Every message this run added, in order. */
  messages: AgentMessage[];
  usage: Usage;
  timestamp: number;
  /** How the run ended: the last assistant message's stop reason, or `aborted`. */
  stopReason: StopReason;
  /** Set when an input filter rejected the prompt. */
  rejection?: string;
  /** The validated structured output (`config.output`), when the answer matched the schema. */
  output?: unknown;
  /** The structured output's failure, when the answer still did not match after the corrective turn. */
  outputError?: OutputFailure;
  /** What ended the run when a stop condition (`stopWhen`) or a guardrail did. */
  stoppedBy?: StoppedBy;
  /** The agent that answered last, when the run's tools hand off (`handoff()`). */
  agent?: string;
}

/**
 * The conversation went from one agent to another (`handoff()`): the model called `toolName`, and
 * the next turns are `to`'s (its system prompt, tools, model and settings). Emitted after the turn
 * that called it.
 */
export interface HandoffEvent {
  type: 'Handoff';
  loopId: string;
  /** The turn whose tool call handed off. */
  turnIndex: number;
  from: string;
  to: string;
  toolCallId: string;
  toolName: string;
  /** The arguments the model gave the handoff tool (its reason, by default). */
  arguments: Record<string, unknown>;
  timestamp: number;
}

/** The kinds of guardrail (`config.guardrails`). */
export type GuardrailKind = 'input' | 'output' | 'toolInput' | 'toolOutput';

/** A stop condition that held (`condition`: its label), or a guardrail that tripped and ended the run. */
export type StoppedBy =
  | { readonly kind: 'stopWhen'; readonly condition: string }
  | { readonly kind: 'guardrail'; readonly guardrail: string; readonly stage: 'input' | 'output'; readonly info?: unknown };

export interface TurnStartEvent {
  type: 'TurnStart';
  loopId: string;
  turnIndex: number;
  timestamp: number;
  triggeredBy: TurnTrigger;
}

export interface TurnEndEvent {
  type: 'TurnEnd';
  loopId: string;
  turnIndex: number;
  message: AgentMessage;
  usage: Usage;
  timestamp: number;
  toolResults: ToolResultMessage[];
}

export interface MessageStartEvent {
  type: 'MessageStart';
  loopId: string;
  message: AgentMessage;
  timestamp: number;
}

export interface MessageUpdateEvent {
  type: 'MessageUpdate';
  loopId: string;
  /** The assistant message so far: an immutable snapshot (a later update is a new object; unchanged content blocks are shared). */
  message: AssistantMessage;
  delta: StreamDelta;
  timestamp: number;
}

/**
 * Discard what you rendered of the streaming assistant message and continue from `message`.
 * Emitted between a MessageStart and its MessageEnd when a model call was retried after partial
 * output and the new attempt diverged from what was already streamed (`retryDiverged`); a retry
 * that repeats the same output is resumed without one (its repeated prefix is not re-sent).
 * `message` holds the content both attempts share (normally none); the following MessageUpdate
 * deltas build on it. A model fallback after partial output (`modelFallback`) resets to the next
 * model's empty message.
 */
export interface MessageResetEvent {
  type: 'MessageReset';
  loopId: string;
  message: AssistantMessage;
  /** `retryDiverged`: a retry streamed something else; `modelFallback`: the next model of the chain took the turn. */
  reason: 'retryDiverged' | 'modelFallback';
  timestamp: number;
}

export interface MessageEndEvent {
  type: 'MessageEnd';
  loopId: string;
  message: AgentMessage;
  timestamp: number;
}

export interface ToolExecutionStartEvent {
  type: 'ToolExecutionStart';
  loopId: string;
  toolCallId: string;
  toolName: string;
  args: Record<string, unknown>;
  timestamp: number;
}

export interface ToolExecutionUpdateEvent {
  type: 'ToolExecutionUpdate';
  loopId: string;
  toolCallId: string;
  toolName: string;
  partialResult: ToolResult;
  timestamp: number;
}

export interface ToolExecutionEndEvent {
  type: 'ToolExecutionEnd';
  loopId: string;
  toolCallId: string;
  toolName: string;
  result: ToolResult;
  isError: boolean;
  childLoopId?: string;
  timestamp: number;
}

export interface ProgressMessageEvent {
  type: 'ProgressMessage';
  loopId: string;
  toolCallId: string;
  toolName: string;
  text: string;
  timestamp: number;
}

export interface InputRejectedEvent {
  type: 'InputRejected';
  loopId: string;
  reason: string;
  timestamp: number;
}

export interface ParallelLoopStartEvent {
  type: 'ParallelLoopStart';
  sessionId: string;
  loopIds: string[];
  timestamp: number;
}

export interface ParallelLoopEndEvent {
  type: 'ParallelLoopEnd';
  sessionId: string;
  selectedLoopId: string;
  selectedConfigIndex: number;
  evaluationUsage: Usage;
  timestamp: number;
}

export type CompactionTier = 1 | 2 | 3;

export interface CompactionStartEvent {
  type: 'CompactionStart';
  loopId: string;
  /** `budget`: over the context budget before a call; `overflow`: the provider said it did not fit. */
  reason: 'budget' | 'overflow';
  tokensBefore: number;
  timestamp: number;
}

export interface CompactionEndEvent {
  type: 'CompactionEnd';
  loopId: string;
  tier: CompactionTier;
  tokensBefore: number;
  tokensAfter: number;
  messagesBefore: number;
  messagesAfter: number;
  timestamp: number;
}

export interface RetryScheduledEvent {
  type: 'RetryScheduled';
  loopId: string;
  /** 1-based attempt number of the retry about to run. */
  attempt: number;
  delayMs: number;
  errorKind: string;
  errorMessage: string;
  /** The model the failed attempt went to (an attempt that failed before any output has no message naming it). */
  model?: ModelRef;
  timestamp: number;
}

/** Which model a {@link ModelFallbackEvent} or a {@link RetryScheduledEvent} names. */
export interface ModelRef {
  provider: string;
  id: string;
}

/** Why the next model of the chain took the turn. */
export type ModelFallbackReason = 'retriesExhausted' | 'circuitOpen' | 'contextOverflow';

/**
 * The model call failed in a way the next model of the `models` chain may not (retries spent on a
 * retryable error, an open circuit, a context overflow beyond recovery): `to` takes the turn, and
 * the rest of the run. Emitted before the new call's first event.
 */
export interface ModelFallbackEvent {
  type: 'ModelFallback';
  loopId: string;
  turnIndex: number;
  from: ModelRef;
  to: ModelRef;
  reason: ModelFallbackReason;
  /** The failure that made `from` give up (`kind: message` for a provider error). */
  errorMessage: string;
  timestamp: number;
}

/**
 * A guardrail tripped: an input guardrail (the model call in flight is cut) or an output guardrail
 * (the final answer is refused), which end the run (`AgentEnd.stoppedBy` names it too); or a tool
 * guardrail, which turns one call down (`toolCallId`) while the run goes on.
 */
export interface GuardrailTrippedEvent {
  type: 'GuardrailTripped';
  loopId: string;
  turnIndex: number;
  guardrail: string;
  kind: GuardrailKind;
  /** What the guardrail's verdict carried. */
  info?: unknown;
  /** The guardrail failed (threw, or answered no verdict) and a failure trips (`guardrails.onError`). */
  error?: string;
  /** The call a tool guardrail turned down (`toolInput`) or whose result it withheld (`toolOutput`); the run goes on. */
  toolCallId?: string;
  timestamp: number;
}

/** A hook, policy or filter threw; the loop reported it and went on as if it had said continue. */
export interface HookErrorEvent {
  type: 'HookError';
  loopId: string;
  hook: string;
  message: string;
  timestamp: number;
}

/**
 * A tool call waits for a person's (or a policy's) approval before `execute`: answer it with
 * `agent.approve(toolCallId, { approved, args?, reason? })` or the loop's `approval` config.
 */
export interface ToolApprovalRequestedEvent {
  type: 'ToolApprovalRequested';
  loopId: string;
  toolCallId: string;
  toolName: string;
  args: Record<string, unknown>;
  timestamp: number;
}

/**
 * The answer to a ToolApprovalRequested: approved (with the arguments the call runs with, when
 * they were edited), denied with a reason, or ended because the run was aborted or the call
 * cancelled (`approved: false`, `reason` says which).
 */
export interface ToolApprovalResolvedEvent {
  type: 'ToolApprovalResolved';
  loopId: string;
  toolCallId: string;
  toolName: string;
  approved: boolean;
  /** The edited arguments an approval gave, when it gave any. */
  args?: Record<string, unknown>;
  reason?: string;
  timestamp: number;
}

export type AgentEvent =
  | AgentStartEvent
  | AgentEndEvent
  | TurnStartEvent
  | TurnEndEvent
  | MessageStartEvent
  | MessageUpdateEvent
  | MessageResetEvent
  | MessageEndEvent
  | ToolExecutionStartEvent
  | ToolExecutionUpdateEvent
  | ToolExecutionEndEvent
  | ProgressMessageEvent
  | InputRejectedEvent
  | ParallelLoopStartEvent
  | ParallelLoopEndEvent
  | CompactionStartEvent
  | CompactionEndEvent
  | RetryScheduledEvent
  | ModelFallbackEvent
  | HookErrorEvent
  | GuardrailTrippedEvent
  | ToolApprovalRequestedEvent
  | ToolApprovalResolvedEvent
  | HandoffEvent;

export type AgentEventType = AgentEvent['type'];
export type EventOf<T extends AgentEventType> = Extract<AgentEvent, { type: T }>;

/**
 * A type guard for one event type, for `filter`: the events after it are typed as that event.
 *
 * ```
 * events:                          --A--u--u--m--Z|
 * filter(isEvent('MessageUpdate')): -----u--u------|
 * ```
 *
 * @example
 * run$.pipe(filter(isEvent('ToolExecutionEnd'))).subscribe((e) => console.log(e.toolName, e.isError));
 */
export const isEvent =
  <T extends AgentEventType>(type: T) =>
  (e: AgentEvent): e is EventOf<T> =>
    e.type === type;

/** Loop id of an event, if it has one. */
export function loopIdOf(e: AgentEvent): string | undefined {
  return 'loopId' in e ? e.loopId : undefined;
}

export type { Message };
